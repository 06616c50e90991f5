"""The source documents' strategy examples, run verbatim (``import simdist as tf``); their printed
outputs (multi_worker_mirrored_strategy_api, custom_training_tutorial) are the expectations."""

import numpy as np

import simdist as tf


def test_distributed_dataset_range_4_batch_2():
    global_batch_size = 2
    strategy = tf.distribute.MirroredStrategy(devices=["GPU:0", "GPU:1"])
    dataset = tf.data.Dataset.range(4).batch(global_batch_size)
    dist_dataset = strategy.experimental_distribute_dataset(dataset)

    @tf.function
    def replica_fn(input):
        return input * 2

    result = []
    for x in dist_dataset:
        result.append(strategy.run(replica_fn, args=(x,)))
    assert str(result) == (
        "[PerReplica:{\n"
        "  0: <tf.Tensor: shape=(1,), dtype=int64, numpy=array([0])>,\n"
        "  1: <tf.Tensor: shape=(1,), dtype=int64, numpy=array([2])>\n"
        "}, PerReplica:{\n"
        "  0: <tf.Tensor: shape=(1,), dtype=int64, numpy=array([4])>,\n"
        "  1: <tf.Tensor: shape=(1,), dtype=int64, numpy=array([6])>\n"
        "}]"
    )


def test_values_from_function_examples():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])

    def value_fn(ctx):
        return tf.constant(1.0)

    local_result = strategy.experimental_local_results(
        strategy.experimental_distribute_values_from_function(value_fn)
    )
    assert repr(local_result) == (
        "(<tf.Tensor: shape=(), dtype=float32, numpy=1.0>, "
        "<tf.Tensor: shape=(), dtype=float32, numpy=1.0>)"
    )

    array_value = np.array([3.0, 2.0, 1.0])

    def value_fn2(ctx):
        return array_value[ctx.replica_id_in_sync_group]

    local_result = strategy.experimental_local_results(
        strategy.experimental_distribute_values_from_function(value_fn2)
    )
    assert local_result == (3.0, 2.0)

    def value_fn3(ctx):
        return ctx.num_replicas_in_sync

    local_result = strategy.experimental_local_results(
        strategy.experimental_distribute_values_from_function(value_fn3)
    )
    assert local_result == (2, 2)


def test_values_placed_on_worker_devices():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    worker_devices = strategy.extended.worker_devices
    multiple_values = []
    for i in range(strategy.num_replicas_in_sync):
        with tf.device(worker_devices[i]):
            multiple_values.append(tf.constant(1.0))

    def value_fn(ctx):
        return multiple_values[ctx.replica_id_in_sync_group]

    distributed_values = strategy.experimental_distribute_values_from_function(value_fn)
    results = strategy.experimental_local_results(distributed_values)
    assert [v.device for v in results] == list(worker_devices)


def test_gather_axis_0_of_two_replicas():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    distributed_values = strategy.experimental_distribute_values_from_function(
        lambda _: tf.identity(tf.constant([[1], [2]]))
    )

    @tf.function
    def run():
        return strategy.gather(distributed_values, axis=0)

    assert repr(run()) == (
        "<tf.Tensor: shape=(4, 1), dtype=int32, numpy=\n"
        "array([[1],\n       [2],\n       [1],\n       [2]], dtype=int32)>"
    )


def test_gather_axes_0_1_2_of_four_replicas():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1", "GPU:2", "GPU:3"])
    single_tensor = tf.reshape(tf.range(6), shape=(1, 2, 3))
    distributed_values = strategy.experimental_distribute_values_from_function(
        lambda _: tf.identity(single_tensor)
    )

    @tf.function
    def run(axis):
        return strategy.gather(distributed_values, axis=axis)

    assert run(0).shape == (4, 2, 3)
    np.testing.assert_array_equal(run(0).numpy(), np.tile(np.arange(6).reshape(1, 2, 3), (4, 1, 1)))
    assert repr(run(1)) == (
        "<tf.Tensor: shape=(1, 8, 3), dtype=int32, numpy=\n"
        "array([[[0, 1, 2],\n        [3, 4, 5],\n        [0, 1, 2],\n        [3, 4, 5],\n"
        "        [0, 1, 2],\n        [3, 4, 5],\n        [0, 1, 2],\n        [3, 4, 5]]], "
        "dtype=int32)>"
    )
    assert repr(run(2)) == (
        "<tf.Tensor: shape=(1, 2, 12), dtype=int32, numpy=\n"
        "array([[[0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2],\n"
        "        [3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5]]], dtype=int32)>"
    )


def test_reduce_of_replica_ids_and_devices():
    strategy = tf.distribute.MirroredStrategy(devices=["GPU:0", "GPU:1"])

    def step_fn():
        i = tf.distribute.get_replica_context().replica_id_in_sync_group
        return tf.identity(i)

    per_replica_result = strategy.run(step_fn)
    local = strategy.experimental_local_results(per_replica_result)
    assert local[0].device == "/job:localhost/replica:0/task:0/device:GPU:0"
    assert local[1].device == "/job:localhost/replica:0/task:0/device:GPU:1"
    total = strategy.reduce("SUM", per_replica_result, axis=None)
    assert repr(total) == "<tf.Tensor: shape=(), dtype=int32, numpy=1>"
    assert total.device == "/job:localhost/replica:0/task:0/device:CPU:0"


def test_reduce_axis_none_and_axis_0_of_a_global_batch_of_8():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    per_replica_result = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant([0, 1, 2, 3]) + 4 * ctx.replica_id_in_sync_group
    )
    assert strategy.reduce("sum", per_replica_result, axis=None).numpy().tolist() == [4, 6, 8, 10]
    assert int(strategy.reduce("sum", per_replica_result, axis=0)) == 28


def test_reduce_mean_of_a_partial_batch_uses_the_right_denominator():
    # The last batch of 6 split [0, 1, 2, 3] and [4, 5]: MEAN with axis=0 divides by 6.
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    parts = [tf.constant([0.0, 1.0, 2.0, 3.0]), tf.constant([4.0, 5.0])]
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: parts[ctx.replica_id_in_sync_group]
    )
    assert float(strategy.reduce(tf.distribute.ReduceOp.MEAN, values, axis=0)) == 2.5
    means = strategy.run(lambda v: tf.reduce_mean(v), args=(values,))
    assert float(strategy.reduce("MEAN", means, axis=None)) == 3.0  # the mean of means


def test_run_examples():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    tensor_input = tf.constant(3.0)

    @tf.function
    def replica_fn(input):
        return input * 2.0

    result = strategy.run(replica_fn, args=(tensor_input,))
    assert repr(result) == (
        "PerReplica:{\n"
        "  0: <tf.Tensor: shape=(), dtype=float32, numpy=6.0>,\n"
        "  1: <tf.Tensor: shape=(), dtype=float32, numpy=6.0>\n"
        "}"
    )

    @tf.function
    def run():
        def value_fn(value_context):
            return value_context.num_replicas_in_sync

        distributed_values = strategy.experimental_distribute_values_from_function(value_fn)

        def replica_fn2(input):
            return input * 2

        return strategy.run(replica_fn2, args=(distributed_values,))

    assert repr(run()) == "<tf.Tensor: shape=(), dtype=int32, numpy=4>"

    strategy = tf.distribute.MirroredStrategy(["gpu:0", "gpu:1"])

    @tf.function
    def run_all_reduce():
        def value_fn(value_context):
            return tf.constant(value_context.replica_id_in_sync_group)

        distributed_values = strategy.experimental_distribute_values_from_function(value_fn)

        def replica_fn(input):
            return tf.distribute.get_replica_context().all_reduce("sum", input)

        return strategy.run(replica_fn, args=(distributed_values,))

    assert repr(run_all_reduce()) == (
        "PerReplica:{\n"
        "  0: <tf.Tensor: shape=(), dtype=int32, numpy=1>,\n"
        "  1: <tf.Tensor: shape=(), dtype=int32, numpy=1>\n"
        "}"
    )


def test_scope_example():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        mirrored_variable = tf.Variable(1.0)
        assert tf.distribute.get_strategy() is strategy
    assert repr(mirrored_variable) == (
        "MirroredVariable:{\n"
        "  0: <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>,\n"
        "  1: <tf.Variable 'Variable/replica_1:0' shape=() dtype=float32, numpy=1.0>\n"
        "}"
    )
    regular_variable = tf.Variable(1.0)
    assert repr(regular_variable) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"
    assert not tf.distribute.has_strategy()


def test_loss_scaling_worked_example_and_the_mean_metric_pitfall():
    # Two replicas, two examples each, per-example losses [2, 3] and [4, 5], global batch 4.
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    losses = [tf.constant([2.0, 3.0]), tf.constant([4.0, 5.0])]
    per_example = strategy.experimental_distribute_values_from_function(
        lambda ctx: losses[ctx.replica_id_in_sync_group]
    )
    with strategy.scope():
        mean_metric = tf.keras.metrics.Mean()

    def step(per_example_loss):
        loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=4)
        mean_metric.update_state(loss)
        return loss

    scaled = strategy.run(step, args=(per_example,))
    assert [float(v) for v in scaled.values] == [1.25, 2.25]
    assert float(strategy.reduce("SUM", scaled, axis=None)) == 3.5
    assert float(mean_metric.result()) == 1.75  # the tutorial's warning: scaled by N again


def test_default_strategy_outside_any_scope():
    default = tf.distribute.get_strategy()
    assert default.num_replicas_in_sync == 1
    assert tf.distribute.get_replica_context() is not None
    assert not tf.distribute.in_cross_replica_context()
    strategy = tf.distribute.OneDeviceStrategy(device="/gpu:0")
    with strategy.scope():
        assert tf.distribute.in_cross_replica_context()
        assert tf.distribute.get_replica_context() is None
    assert strategy.run(lambda x: x * 2, args=(tf.constant(2),)).device.endswith("GPU:0")
