"""Every strategy: devices, variables, `extended`, and one training step that agrees."""

import numpy as np
import pytest

import simdist as tf
from simdist.distribute.values import Mirrored


def test_virtual_devices_are_listed_as_tf_lists_them():
    gpus = tf.config.list_logical_devices("GPU")
    assert [d.name for d in gpus] == [f"/device:GPU:{i}" for i in range(4)]
    assert tf.config.list_physical_devices("CPU")[0].name == "/physical_device:CPU:0"
    with pytest.raises(ValueError, match="Unknown device type"):
        tf.config.list_logical_devices("NPU")


def test_set_virtual_devices_changes_the_default_mirrored_devices():
    tf.config.set_virtual_devices(gpus=2)
    try:
        assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 2
    finally:
        tf.config.set_virtual_devices(gpus=4)
    with pytest.raises(ValueError, match="integer >= 0"):
        tf.config.set_virtual_devices(gpus=-1)


def test_one_device_strategy_keeps_plain_variables_on_its_device():
    strategy = tf.distribute.OneDeviceStrategy(device="/gpu:1")
    with strategy.scope():
        v = tf.Variable(1.0)
    assert type(v) is tf.Variable and v.device.endswith("GPU:1")
    assert strategy.experimental_local_results(strategy.run(lambda: v * 2))[0].numpy() == 2.0
    values = strategy.experimental_distribute_values_from_function(lambda ctx: tf.constant(5))
    assert int(values) == 5  # one replica: the plain value


def test_central_storage_keeps_one_copy_on_the_parameter_device():
    strategy = tf.distribute.experimental.CentralStorageStrategy(["GPU:0", "GPU:1"])
    assert strategy.extended.parameter_devices == ("/job:localhost/replica:0/task:0/device:CPU:0",)
    with strategy.scope():
        v = tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN)
        metric = tf.keras.metrics.Sum()
    assert len(v.values) == 1 and v.values[0].device.endswith("CPU:0")
    strategy.run(
        lambda x: v.assign(x),
        args=(
            strategy.experimental_distribute_values_from_function(
                lambda c: tf.constant(float(c.replica_id_in_sync_group))
            ),
        ),
    )
    assert float(v.numpy()) == 0.5
    strategy.run(lambda: metric.update_state(2.0))
    assert float(metric.result()) == 4.0  # metrics stay per replica, summed on read


def test_one_sgd_step_on_the_global_batch_is_the_same_under_every_strategy(distribution):
    strategy = distribution
    x = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
    with strategy.scope():
        w = tf.Variable(np.ones((2, 1), np.float32))
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.5)
    n = strategy.num_replicas_in_sync
    parts = np.split(x, n)
    inputs = (
        strategy.experimental_distribute_values_from_function(
            lambda ctx: tf.constant(parts[ctx.replica_id_in_sync_group])
        )
        if n > 1
        else tf.constant(x)
    )

    def step(xs):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(tf.reduce_sum(xs @ w, axis=1), global_batch_size=4)
        optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    loss = strategy.reduce("SUM", strategy.run(step, args=(inputs,)), axis=None)
    np.testing.assert_allclose(float(loss), x.sum() / 4, rtol=1e-6)
    expected = 1.0 - 0.5 * x.sum(axis=0, keepdims=True).T / 4
    for component in getattr(w, "values", (w,)):
        np.testing.assert_allclose(component.numpy(), expected, rtol=1e-6)


def test_extended_reduce_to_batch_reduce_to_and_update():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        v = tf.Variable([0.0, 0.0])
    value = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant([1.0, 2.0]) * float(ctx.replica_id_in_sync_group + 1)
    )
    reduced = strategy.extended.reduce_to("SUM", value, destinations=v)
    assert isinstance(reduced, Mirrored)
    assert [t.device for t in reduced.values] == [c.device for c in v.values]
    np.testing.assert_array_equal(reduced.values[1].numpy(), [3.0, 6.0])
    on_cpu = strategy.extended.reduce_to("MEAN", value, destinations="/cpu:0")
    np.testing.assert_array_equal(on_cpu.numpy(), [1.5, 3.0])
    (batched,) = strategy.extended.batch_reduce_to("SUM", [(value, v)])
    seen = []
    strategy.extended.update(
        v, lambda comp, delta: seen.append(comp.device) or comp.assign_add(delta), args=(batched,)
    )
    assert seen == [c.device for c in v.values]
    for c in v.values:
        np.testing.assert_array_equal(c.numpy(), [3.0, 6.0])
    assert strategy.extended.variable_created_in_scope(v)
    assert not strategy.extended.variable_created_in_scope(tf.Variable(1.0))
