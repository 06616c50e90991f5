"""TPUStrategy: initialization, replicas per slice, the TPU rules (eager run, static shapes,
gather shapes, host order), multi-step loops, TPU memory, and costs on the slice's torus."""

import logging

import numpy as np
import pytest

import simdist as tf
from simdist import errors

EAGER_RUN_ERROR = (
    "TPUStrategy.run(fn, ...) does not support pure eager execution. please make sure the "
    "function passed into `strategy.run` is a `tf.function` or `strategy.run` is called inside "
    "a `tf.function` if eager behavior is enabled."
)


pytestmark = pytest.mark.usefixtures("fresh_tpu_system")  # tests/distribute/conftest.py


def make_strategy(tpu="v4-8", **kwargs):
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver, **kwargs)


# --- setup ---
def test_strategy_needs_the_tpu_system_initialized():
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="v4-8")
    with pytest.raises(errors.FailedPreconditionError, match="has not been initialized"):
        tf.distribute.TPUStrategy(resolver)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    strategy = tf.distribute.TPUStrategy(resolver)
    assert strategy.cluster_resolver is resolver
    assert strategy.num_replicas_in_sync == 4


@pytest.mark.parametrize(
    "tpu, replicas, hosts", [("v3-8", 8, 1), ("v4-8", 4, 1), ("v5e-16", 16, 2), ("v4-32", 16, 4)]
)
def test_replicas_are_the_slice_tpu_devices(tpu, replicas, hosts):
    strategy = make_strategy(tpu)
    ext = strategy.extended
    assert strategy.num_replicas_in_sync == replicas
    assert (ext.num_hosts, ext.num_replicas_per_host) == (hosts, replicas // hosts)
    per_host = replicas // hosts
    assert ext.worker_devices == tuple(
        f"/job:worker/replica:0/task:{h}/device:TPU:{i}"
        for h in range(hosts)
        for i in range(per_host)
    )
    assert ext.parameter_devices == ext.worker_devices
    assert ext.steps_per_run == 1 and ext.experimental_require_static_shapes


def test_guide_setup_and_the_api_page_worker_devices_example():
    # The guide: resolver, connect, initialize, strategy (local TPU: no name needed).
    cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
    tf.config.experimental_connect_to_cluster(cluster_resolver)
    tf.tpu.experimental.initialize_tpu_system(cluster_resolver)
    tpu_strategy = tf.distribute.TPUStrategy(cluster_resolver)
    assert tpu_strategy.num_replicas_in_sync == 8
    # The API page: TPUStrategy() after the system is up; values placed per worker device.
    strategy = tf.distribute.TPUStrategy()
    worker_devices = strategy.extended.worker_devices
    multiple_values = []
    for i in range(strategy.num_replicas_in_sync):
        with tf.device(worker_devices[i]):
            multiple_values.append(tf.constant(1.0))

    def value_fn(ctx):
        return multiple_values[ctx.replica_id_in_sync_group]

    distributed_values = strategy.experimental_distribute_values_from_function(value_fn)
    local = strategy.experimental_local_results(distributed_values)
    assert [t.device for t in local] == list(worker_devices)
    assert worker_devices[0] == "/job:localhost/replica:0/task:0/device:TPU:0"


def test_experimental_alias_warns(caplog):
    make_strategy()
    with caplog.at_level(logging.WARNING, logger="simdist"):
        strategy = tf.distribute.experimental.TPUStrategy(
            tf.distribute.cluster_resolver.TPUClusterResolver(tpu="v4-8")
        )
    assert strategy.num_replicas_in_sync == 4
    assert "`tf.distribute.experimental.TPUStrategy` is deprecated" in caplog.text


# --- eager run ---
def test_run_outside_tf_function_raises_tfs_error():
    strategy = make_strategy()
    with pytest.raises(NotImplementedError) as info:
        strategy.run(lambda: tf.constant(1.0))
    assert str(info.value) == EAGER_RUN_ERROR


def test_run_accepts_a_tf_function_eagerly_and_any_function_inside_one():
    strategy = make_strategy()

    @tf.function
    def replica_fn():
        return tf.distribute.get_replica_context().replica_id_in_sync_group

    ids = strategy.experimental_local_results(strategy.run(replica_fn))
    assert [int(i) for i in ids] == [0, 1, 2, 3]

    class Model:
        @tf.function
        def __call__(self):
            return tf.constant(2.0)

    assert len(strategy.experimental_local_results(strategy.run(Model()))) == 4

    @tf.function
    def outer():
        return strategy.run(lambda: tf.constant(3.0))

    assert [float(v) for v in strategy.experimental_local_results(outer())] == [3.0] * 4


def test_run_functions_eagerly_makes_a_plain_function_eager_again():
    strategy = make_strategy()
    tf.config.run_functions_eagerly(True)

    @tf.function
    def outer():
        return strategy.run(lambda: tf.constant(3.0))

    with pytest.raises(NotImplementedError, match="does not support pure eager execution"):
        outer()


# --- static shapes ---
def _partial_dataset(strategy, drop_remainder=False):
    # 10 examples, global batch 8 over 4 replicas: the last step splits 2 examples 1, 1, 0, 0.
    x = np.arange(10, dtype=np.float32).reshape(10, 1)
    dataset = tf.data.Dataset.from_tensor_slices(x).batch(8, drop_remainder=drop_remainder)
    return strategy.experimental_distribute_dataset(dataset)


def _count_rows(strategy, dist, options=None):
    @tf.function
    def step(batch):
        def replica_fn(x):
            return tf.shape(x)[0]

        return strategy.reduce(
            "SUM", strategy.run(replica_fn, args=(batch,), options=options), None
        )

    return [int(step(batch)) for batch in dist]


def test_partial_batch_runs_with_tfs_default_dynamic_batch_size():
    strategy = make_strategy()
    assert _count_rows(strategy, _partial_dataset(strategy)) == [8, 2]


def test_partial_batch_without_dynamic_batch_size_is_tfs_runtime_shape_error():
    strategy = make_strategy()
    options = tf.distribute.RunOptions(experimental_enable_dynamic_batch_size=False)
    with pytest.raises(errors.InvalidArgumentError, match="Run-time shape mismatch for TPUExecute"):
        _count_rows(strategy, _partial_dataset(strategy), options)


def test_drop_remainder_gives_static_batches_that_always_run():
    strategy = make_strategy()
    options = tf.distribute.RunOptions(experimental_enable_dynamic_batch_size=False)
    assert _count_rows(strategy, _partial_dataset(strategy, drop_remainder=True), options) == [8]


def test_replica_inputs_must_share_rank_and_dtype():
    strategy = make_strategy()
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.zeros([2] * (1 + int(ctx.replica_id_in_sync_group == 3)))
    )

    @tf.function
    def step():
        return strategy.run(lambda v: v, args=(values,))

    with pytest.raises(ValueError, match="Replicas must have matching input types"):
        step()


# --- gather ---
def _ragged_values(strategy):
    # Replica r holds shape (1, r + 1): gatherable along axis 1 elsewhere, never on a TPU.
    return strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.ones([1, int(ctx.replica_id_in_sync_group) + 1])
    )


def test_gather_needs_identical_shapes_on_tpu():
    strategy = make_strategy()
    with pytest.raises(errors.InvalidArgumentError, match="exactly the same rank and shape"):
        strategy.gather(_ragged_values(strategy), axis=1)
    same = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.fill([1, 2], tf.cast(ctx.replica_id_in_sync_group, tf.float32))
    )
    assert strategy.gather(same, axis=1).numpy().tolist() == [[0, 0, 1, 1, 2, 2, 3, 3]]
    # MirroredStrategy accepts what TPUStrategy refuses (shapes differ only along axis).
    mirrored = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    ragged = mirrored.experimental_distribute_values_from_function(
        lambda ctx: tf.ones([1, int(ctx.replica_id_in_sync_group) + 1])
    )
    assert mirrored.gather(ragged, axis=1).shape == (1, 3)


def test_all_gather_needs_identical_shapes_on_tpu():
    strategy = make_strategy()
    values = _ragged_values(strategy)

    @tf.function
    def step():
        def replica_fn(v):
            return tf.distribute.get_replica_context().all_gather(v, axis=1)

        return strategy.run(replica_fn, args=(values,))

    with pytest.raises(errors.InvalidArgumentError, match="exactly the same rank and shape"):
        step()


# --- host order ---
def _gathered_indices(seed, steps=3):
    strategy = make_strategy("v4-32", simdist_host_order_seed=seed)  # 4 hosts, 16 replicas
    n = 16 * 2 * steps
    x = np.arange(n, dtype=np.float32)
    dataset = tf.data.Dataset.from_tensor_slices(x).batch(32)
    dist = strategy.experimental_distribute_dataset(dataset)

    @tf.function
    def step(batch):
        per_replica = strategy.run(lambda v: v * 1.0, args=(batch,))
        loss = strategy.reduce("SUM", strategy.run(lambda v: tf.reduce_sum(v * v), args=(batch,)))
        return strategy.gather(per_replica, axis=0), loss

    out = [step(batch) for batch in dist]
    return [g.numpy() for g, _ in out], [float(loss) for _, loss in out]


def test_host_order_permutation_changes_only_which_replica_gets_which_examples():
    plain, plain_loss = _gathered_indices(None)
    # Already without a permutation the gathered order is not the dataset's: each host reads
    # its DATA shard of the per-replica batches (TF's multi-worker rule).
    assert np.array_equal(np.sort(np.concatenate(plain)), np.arange(96))
    assert not np.array_equal(np.concatenate(plain), np.arange(96))
    permuted, permuted_loss = _gathered_indices(7)
    assert any(not np.array_equal(a, b) for a, b in zip(plain, permuted, strict=True))
    for a, b in zip(plain, permuted, strict=True):
        assert np.array_equal(np.sort(a), np.sort(b))  # each step: the same examples
    np.testing.assert_allclose(permuted_loss, plain_loss, rtol=1e-6)
    # Deterministic: the same seed gives the same order; another seed another one.
    again, _ = _gathered_indices(7)
    assert all(np.array_equal(a, b) for a, b in zip(permuted, again, strict=True))
    other, _ = _gathered_indices(8)
    assert any(not np.array_equal(a, b) for a, b in zip(permuted, other, strict=True))


def test_host_order_moves_whole_host_blocks():
    plain, _ = _gathered_indices(None, steps=1)
    permuted, _ = _gathered_indices(3, steps=1)
    plain_blocks = [tuple(b) for b in plain[0].reshape(4, 8)]  # 4 hosts x (4 replicas x 2)
    permuted_blocks = [tuple(b) for b in permuted[0].reshape(4, 8)]
    assert sorted(permuted_blocks) == sorted(plain_blocks)
    assert permuted_blocks != plain_blocks


def test_datasets_from_function_get_one_input_pipeline_per_host():
    strategy = make_strategy("v5e-16")  # 2 hosts x 8 replicas
    contexts = []

    def dataset_fn(ctx):
        contexts.append((ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync))
        return tf.data.Dataset.from_tensor_slices(
            np.full((16, 1), ctx.input_pipeline_id, np.float32)
        ).batch(ctx.get_per_replica_batch_size(32))

    dist = strategy.distribute_datasets_from_function(dataset_fn)
    assert contexts == [(2, 0, 16), (2, 1, 16)]
    first = next(iter(dist))
    owners = [int(t.numpy()[0, 0]) for t in strategy.experimental_local_results(first)]
    assert owners == [0] * 8 + [1] * 8


# --- training ---
def _train(strategy, steps_per_call, calls):
    tf.random.set_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(8, drop_remainder=True)
    iterator = iter(strategy.experimental_distribute_dataset(dataset))

    @tf.function
    def train_steps(iterator, steps):
        def step_fn(inputs):
            features, labels = inputs
            with tf.GradientTape() as tape:
                per_example = tf.reduce_sum(tf.square(model(features) - labels), axis=1)
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=8)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return loss

        for _ in tf.range(steps):
            loss = strategy.run(step_fn, args=(next(iterator),))
        return strategy.reduce("SUM", loss, axis=None)

    losses = [float(train_steps(iterator, tf.constant(steps_per_call))) for _ in range(calls)]
    return losses, [np.array(w) for w in model.get_weights()]


def test_multi_step_loop_in_one_function_equals_one_step_per_call():
    _, many = _train(make_strategy(), steps_per_call=3, calls=2)
    _, single = _train(make_strategy(), steps_per_call=1, calls=6)
    for a, b in zip(many, single, strict=True):
        assert np.array_equal(a, b)


def test_tpu_variables_are_mirrored_and_lost_when_the_system_is_initialized_again():
    strategy = make_strategy()
    with strategy.scope():
        v = tf.Variable(1.0)
    assert repr(v).startswith("TPUMirroredVariable:{")
    assert [c.device for c in v.values] == list(strategy.extended.worker_devices)
    resolver = strategy.cluster_resolver
    tf.tpu.experimental.initialize_tpu_system(resolver)
    with pytest.raises(errors.FailedPreconditionError, match="Error while reading resource"):
        v.numpy()
    with strategy.scope():  # the strategy still works on the same slice; new variables live
        w = tf.Variable(2.0)
    assert float(w.numpy()) == 2.0


def test_shutdown_stops_the_strategy():
    strategy = make_strategy()
    tf.tpu.experimental.shutdown_tpu_system(strategy.cluster_resolver)

    @tf.function
    def step():
        return strategy.run(lambda: tf.constant(1.0))

    with pytest.raises(errors.FailedPreconditionError, match="not been initialized"):
        step()


def test_logical_device_assignment_with_one_core_per_replica():
    strategy = make_strategy()
    t = tf.constant(1.0)
    assert strategy.experimental_assign_to_logical_device(t, 0) is t
    with pytest.raises(ValueError, match="must be lower then total number of logical devices"):
        strategy.experimental_assign_to_logical_device(t, 1)
    with pytest.raises(TypeError, match="must be a tf.tpu.experimental.DeviceAssignment"):
        tf.distribute.TPUStrategy(strategy.cluster_resolver, experimental_device_assignment=1)


# --- costs ---
@pytest.mark.parametrize("tpu", ["v4-8", "v5e-16", "v3-32", "v4-128"])
def test_all_reduce_on_the_slice_torus_equals_ring_per_dimension_closed_form(tpu):
    from simdist.cost import price_collective
    from simdist.topology import get_topology

    topology = get_topology(tpu)
    link = topology.links[0]
    nbytes = 2**24
    # Reduce-scatter then all-gather along each dimension: 2 (d - 1) steps of n_d / d bytes,
    # n_d the bytes still being reduced when that dimension's rings start.
    expected, remaining = 0.0, float(nbytes)
    for d in (d for d in topology.torus_dims if d > 1):
        expected += 2 * (d - 1) * (link.latency + remaining / d / link.bandwidth)
        remaining /= d
    cost = price_collective(
        "all_reduce", "ring_per_dimension", topology.num_devices, nbytes, topology
    )
    assert cost.time == pytest.approx(expected, rel=1e-9)


def test_gradients_are_summed_by_ring_per_dimension_over_the_replica_grid():
    from simdist import collectives

    strategy = make_strategy("v3-8")  # 2x2 chips x 2 cores: a (2, 2, 2) replica grid
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=17).astype(np.float32) for _ in range(8)]
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(arrays[int(ctx.replica_id_in_sync_group)])
    )
    total = strategy.reduce("SUM", values, axis=None).numpy()
    expected = collectives.reduce_arrays(
        "sum", arrays, algorithm="ring_per_dimension", torus_dims=(2, 2, 2)
    )
    assert np.array_equal(total, expected)


def test_keras_fit_evaluate_predict_run_on_a_tpu_slice():
    strategy = make_strategy("v4-8")
    rng = np.random.default_rng(0)
    x = rng.random((64, 5)).astype(np.float32)
    y = (x.sum(1) > 2.5).astype(np.int64)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(5,))])
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.5),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16, drop_remainder=True)
    history = model.fit(dataset, epochs=3, verbose=0)  # Keras steps run inside a function
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert np.isfinite(model.evaluate(x, y, batch_size=16, verbose=0))
    assert model.predict(x[:16], batch_size=16, verbose=0).shape == (16, 2)
