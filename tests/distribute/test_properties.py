"""Property tests: simdist's strategy semantics equal the reference's, rule by rule.

Random replica counts 1-8, shapes, dtypes, dataset lengths and batch sizes. Integers must be
exact; floats agree within the stated bound: simdist adds in the values' dtype, in replica
order, and the reference in float64, so float32 results may differ by a few ulps per
addition (rtol 1e-5 covers 8 replicas of values of similar size).
"""

from __future__ import annotations

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf

replica_counts = st.integers(1, 8)
dtypes = st.sampled_from([np.float32, np.float64, np.int32])


@pytest.fixture(autouse=True, scope="module")
def eight_gpus():
    before = len(tf.config.list_logical_devices("GPU"))
    tf.config.set_virtual_devices(gpus=8)
    yield
    tf.config.set_virtual_devices(gpus=before)


def strategy_for(n: int):
    return tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(n)])


def values_for(dtype):
    if np.dtype(dtype).kind == "i":
        return st.integers(-1000, 1000)
    return st.floats(-100, 100, allow_nan=False, width=np.dtype(dtype).itemsize * 8)


@st.composite
def per_replica_arrays(draw, same_shape=True, min_rank=0):
    n = draw(replica_counts)
    dtype = draw(dtypes)
    shape = draw(hnp.array_shapes(min_dims=min_rank, max_dims=3, min_side=0, max_side=4))
    arrays = []
    for _ in range(n):
        s = shape if same_shape else (draw(st.integers(0, 4)), *shape[1:])
        arrays.append(draw(hnp.arrays(dtype, s, elements=values_for(dtype))))
    return arrays


def distributed(strategy, arrays):
    tensors = [tf.constant(a) for a in arrays]
    return strategy.experimental_distribute_values_from_function(
        lambda ctx: tensors[ctx.replica_id_in_sync_group]
    )


def assert_matches(actual, expected, dtype):
    actual = np.asarray(actual)
    if np.dtype(dtype).kind == "i" and actual.dtype.kind == "i":
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-4)


@given(per_replica_arrays(), st.sampled_from(["SUM", "MEAN", "sum", "mean"]))
def test_reduce_axis_none_matches_reference(arrays, op):
    strategy = strategy_for(len(arrays))
    out = strategy.reduce(op, distributed(strategy, arrays), axis=None)
    assert out.device.endswith("CPU:0")
    assert_matches(out, ref.reduce(op, arrays), arrays[0].dtype)


@given(per_replica_arrays(same_shape=False, min_rank=1), st.sampled_from(["SUM", "MEAN"]))
def test_reduce_along_the_batch_axis_matches_reference(arrays, op):
    # Partial and empty per-replica batches included: MEAN divides by the true count.
    strategy = strategy_for(len(arrays))
    out = strategy.reduce(op, distributed(strategy, arrays), axis=0)
    expected = ref.reduce(op, arrays, axis=0)
    if np.asarray(expected).size and np.all(np.isnan(np.asarray(expected, dtype=float))):
        assert np.all(np.isnan(out.numpy()))
    else:
        assert_matches(out, expected, arrays[0].dtype)


@given(per_replica_arrays(same_shape=False, min_rank=1))
def test_gather_along_axis_0_matches_reference(arrays):
    strategy = strategy_for(len(arrays))
    out = strategy.gather(distributed(strategy, arrays), axis=0)
    np.testing.assert_array_equal(out.numpy(), ref.gather(arrays, axis=0))


@given(per_replica_arrays(min_rank=1), st.sampled_from(["SUM", "MEAN"]))
def test_all_reduce_and_all_gather_in_replica_context_match_reference(arrays, op):
    strategy = strategy_for(len(arrays))

    def fn(x):
        ctx = tf.distribute.get_replica_context()
        return ctx.all_reduce(op, x), ctx.all_gather(x, axis=0)

    reduced, gathered = strategy.run(fn, args=(distributed(strategy, arrays),))
    expected_reduced = ref.all_reduce(op, arrays)
    expected_gathered = ref.all_gather(arrays, axis=0)
    local_r = strategy.experimental_local_results(reduced)
    local_g = strategy.experimental_local_results(gathered)
    for r in range(len(arrays)):
        assert_matches(local_r[r], expected_reduced[r], arrays[0].dtype)
        np.testing.assert_array_equal(local_g[r].numpy(), expected_gathered[r])


aggregations = st.sampled_from(["SUM", "MEAN", "ONLY_FIRST_REPLICA", "NONE"])
update_kinds = st.sampled_from(["assign", "assign_add", "assign_sub"])


@given(replica_counts, aggregations, update_kinds, st.data())
def test_mirrored_variable_updates_in_replica_context_match_reference(n, aggregation, kind, data):
    values = data.draw(st.lists(st.floats(-10, 10, width=32), min_size=n, max_size=n))
    if aggregation == "NONE" and data.draw(st.booleans()):
        values = [values[0]] * n  # equal values: the one case NONE allows
    strategy = strategy_for(n)
    with strategy.scope():
        v = tf.Variable(1.5, aggregation=getattr(tf.VariableAggregation, aggregation))
    copies = [np.float32(1.5)] * n
    try:
        expected = ref.mirrored_update_replica_context(copies, values, aggregation, kind)
    except ValueError:
        with pytest.raises(ValueError):
            strategy.run(
                lambda x: getattr(v, kind)(x), args=(distributed(strategy, np.float32(values)),)
            )
        return
    strategy.run(lambda x: getattr(v, kind)(x), args=(distributed(strategy, np.float32(values)),))
    actual = [c.numpy() for c in v.values]
    np.testing.assert_allclose(actual, np.asarray(expected, np.float64), rtol=1e-5, atol=1e-5)
    assert len({a.tobytes() for a in actual}) == 1  # every copy bit-identical


@given(replica_counts, st.sampled_from(["SUM", "MEAN", "ONLY_FIRST_REPLICA"]), st.data())
def test_sync_on_read_reads_and_assigns_match_reference(n, aggregation, data):
    local = data.draw(st.lists(st.floats(-10, 10, width=32), min_size=n, max_size=n))
    strategy = strategy_for(n)
    with strategy.scope():
        v = tf.Variable(
            0.0,
            synchronization=tf.VariableSynchronization.ON_READ,
            aggregation=getattr(tf.VariableAggregation, aggregation),
        )
    strategy.run(lambda x: v.assign(x), args=(distributed(strategy, np.float32(local)),))
    np.testing.assert_allclose(
        float(v.read_value()),
        ref.sync_on_read_value(list(np.float32(local)), aggregation),
        rtol=1e-5,
        atol=1e-5,
    )
    value = data.draw(st.floats(-10, 10, width=32))
    v.assign(value)
    expected = ref.sync_on_read_assign_cross_replica(list(np.float32(local)), value, aggregation)
    np.testing.assert_allclose([c.numpy() for c in v.values], expected, rtol=1e-5, atol=1e-6)


@given(replica_counts, st.data())
def test_compute_average_loss_in_replica_context_matches_reference(n, data):
    per_replica = st.lists(st.floats(0, 10, width=32), min_size=0, max_size=5)
    losses = [np.float32(data.draw(per_replica)) for _ in range(n)]
    explicit = data.draw(st.booleans())
    global_batch = data.draw(st.integers(1, 40)) if explicit else None
    strategy = strategy_for(n)

    def fn(x):
        return tf.nn.compute_average_loss(x, global_batch_size=global_batch)

    out = strategy.run(fn, args=(distributed(strategy, losses),))
    for r, got in enumerate(strategy.experimental_local_results(out)):
        expected = ref.compute_average_loss(
            losses[r], global_batch_size=global_batch, num_replicas_in_sync=n
        )
        np.testing.assert_allclose(float(got), expected, rtol=1e-5, atol=1e-6)


@given(
    st.integers(0, 30),
    st.integers(1, 10),
    replica_counts,
    st.booleans(),
    st.sampled_from(["AUTO", "OFF"]),
)
def test_distributed_dataset_splitting_matches_reference(length, batch, n, drop, policy):
    strategy = strategy_for(n)
    dataset = tf.data.Dataset.range(length).batch(batch, drop_remainder=drop)
    if policy == "OFF":
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
        dataset = dataset.with_options(options)
    steps = [
        [t.numpy().tolist() for t in strategy.experimental_local_results(x)]
        for x in strategy.experimental_distribute_dataset(dataset)
    ]
    expected = ref.distribute_dataset(
        np.arange(length), batch, n, drop_remainder=drop, auto_shard_policy=policy
    )
    assert steps == [[b.tolist() for b in step] for step in expected]


@given(st.sampled_from([1, 2, 4, 8]), st.data())
def test_a_replicated_training_step_equals_the_reference_step(n, data):
    # Softmax regression, SGD, float64: N replicas x B/N with the loss scaled by the global
    # batch == the reference's single-device step on the global batch. (The learning rate is
    # 0.25, exact in float32: Keras keeps it in a float32 variable, as TF does.)
    global_batch = 8
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = rng.standard_normal((global_batch, 3))
    y = rng.integers(0, 4, global_batch)
    w0, b0 = rng.standard_normal((3, 4)), rng.standard_normal(4)
    strategy = strategy_for(n)
    with strategy.scope():
        w = tf.Variable(w0)
        b = tf.Variable(b0)
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.25)

    def step(xs, ys):
        with tf.GradientTape() as tape:
            logits = xs @ w + b
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(ys, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        grads = tape.gradient(loss, [w, b])
        optimizer.apply_gradients(zip(grads, [w, b], strict=True))
        return loss

    per = global_batch // n
    xs = distributed(strategy, [x[i * per : (i + 1) * per] for i in range(n)])
    ys = distributed(strategy, [y[i * per : (i + 1) * per] for i in range(n)])
    loss = strategy.reduce("SUM", strategy.run(step, args=(xs, ys)), axis=None)
    expected = ref.train_step_single([w0, b0], x, y, ref.softmax_regression, lr=0.25)
    np.testing.assert_allclose(float(loss), expected.loss, rtol=1e-12)
    for var, p in zip((w, b), expected.params, strict=True):
        for component in var.values:
            np.testing.assert_allclose(component.numpy(), p, rtol=1e-12, atol=1e-12)
