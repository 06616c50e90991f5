"""batch_reduce_to: a batch of values reduced together, packed as TF packs them.

NcclAllReduce / HierarchicalCopyAllReduce with ``num_packs`` > 0 concatenate the values of
each dtype and all-reduce ``num_packs`` packs (the last takes the remainder); num_packs=0
and ReductionToOneDevice reduce each value on its own. Whatever the packing, each result is
the reference's reduction of that value (integers exactly, floats within a few ulps).
"""

from __future__ import annotations

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist import sim
from simdist.sim.profile import CollectiveRecord

DTYPES = [np.float32, np.float64, np.int32]


@pytest.fixture(autouse=True, scope="module")
def four_gpus():
    before = len(tf.config.list_logical_devices("GPU"))
    tf.config.set_virtual_devices(gpus=4)
    yield
    tf.config.set_virtual_devices(gpus=before)


def _cross_device_ops(kind: str, num_packs: int):
    if kind == "nccl":
        return tf.distribute.NcclAllReduce(num_packs=num_packs)
    if kind == "hierarchical":
        return tf.distribute.HierarchicalCopyAllReduce(num_packs=num_packs)
    return tf.distribute.ReductionToOneDevice()


value_specs = st.lists(
    st.tuples(st.sampled_from(DTYPES), st.lists(st.integers(0, 4), min_size=0, max_size=2)),
    min_size=1,
    max_size=5,
)


def _per_replica_arrays(rng, specs, n: int) -> list[list[np.ndarray]]:
    """For each ``(dtype, shape)`` of ``specs``, one random array per replica."""
    per_value = []
    for dtype, shape in specs:
        if np.dtype(dtype).kind == "i":
            arrays = [rng.integers(-1000, 1000, shape).astype(dtype) for _ in range(n)]
        else:
            arrays = [rng.uniform(-100, 100, shape).astype(dtype) for _ in range(n)]
        per_value.append(arrays)
    return per_value


def _distributed(strategy, per_value) -> list:
    """Each value's arrays as a distributed value: replica r holds ``arrays[r]``."""
    return [
        strategy.experimental_distribute_values_from_function(
            lambda ctx, arrays=arrays: tf.constant(arrays[ctx.replica_id_in_sync_group])
        )
        for arrays in per_value
    ]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 4),
    kind=st.sampled_from(["nccl", "hierarchical", "one_device"]),
    num_packs=st.integers(0, 3),
    specs=value_specs,
    op=st.sampled_from(["SUM", "MEAN"]),
    seed=st.integers(0, 2**16),
)
def test_each_result_is_the_reference_reduction(n, kind, num_packs, specs, op, seed):
    rng = np.random.default_rng(seed)
    strategy = tf.distribute.MirroredStrategy(
        [f"GPU:{i}" for i in range(n)], cross_device_ops=_cross_device_ops(kind, num_packs)
    )
    with strategy.scope():
        destination = tf.Variable(0.0)
    per_value = _per_replica_arrays(rng, specs, n)
    values = _distributed(strategy, per_value)
    results = strategy.extended.batch_reduce_to(op, [(v, destination) for v in values])
    assert len(results) == len(values)
    for arrays, result in zip(per_value, results, strict=True):
        copies = strategy.experimental_local_results(result) if n > 1 else (result,)
        assert [c.device for c in copies] == [c.device for c in destination.values]
        expected = ref.reduce(op, arrays)
        for copy in copies:
            got = copy.numpy()
            assert got.shape == expected.shape
            if op == "SUM":
                assert got.dtype == arrays[0].dtype  # summed in the values' dtype
            if arrays[0].dtype.kind == "i":
                np.testing.assert_array_equal(got, expected)
            else:
                np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


def _recorded_packs(cross_device_ops, values) -> list[tuple[str, int]]:
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"], cross_device_ops)
    with strategy.scope():
        destination = tf.Variable(0.0)
    distributed = [
        strategy.experimental_distribute_values_from_function(lambda ctx, v=v: tf.constant(v))
        for v in values
    ]
    with sim.profile(topology="dgx-h100") as prof:
        strategy.extended.batch_reduce_to("SUM", [(v, destination) for v in distributed])
    records = [r for r in prof.outside if isinstance(r, CollectiveRecord)]
    return [(r.dtype, r.nbytes) for r in records]


def test_packs_split_each_dtype_as_tf_does_the_last_taking_the_remainder():
    values = [np.ones(10, np.float32), np.ones(3, np.float32), np.ones(4, np.int32)]
    # 13 float32 elements in 2 packs: 6 and 7; the int32 values: 2 and 2
    assert _recorded_packs(tf.distribute.NcclAllReduce(num_packs=2), values) == [
        ("float32", 24),
        ("float32", 28),
        ("int32", 8),
        ("int32", 8),
    ]
    assert _recorded_packs(tf.distribute.NcclAllReduce(num_packs=1), values) == [
        ("float32", 52),
        ("int32", 16),
    ]


def test_no_packing_without_packs_and_for_reduction_to_one_device():
    values = [np.ones(10, np.float32), np.ones(3, np.float32)]
    expected = [("float32", 40), ("float32", 12)]
    assert _recorded_packs(tf.distribute.NcclAllReduce(num_packs=0), values) == expected
    assert _recorded_packs(tf.distribute.ReductionToOneDevice(), values) == expected


def test_a_value_of_another_shape_on_some_replica_is_named():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        destination = tf.Variable(0.0)
    good = strategy.experimental_distribute_values_from_function(lambda ctx: tf.constant(1.0))
    bad = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.ones([ctx.replica_id_in_sync_group + 1])
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="replica 1 has shape"):
        strategy.extended.batch_reduce_to("SUM", [(good, destination), (bad, destination)])


def _replica_context_packs(cross_device_ops, values) -> list[tuple[str, int]]:
    """The all-reduces ``ReplicaContext.all_reduce`` of ``values`` (a list) records."""
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"], cross_device_ops)

    def fn():
        return tf.distribute.get_replica_context().all_reduce(
            "SUM", [tf.constant(v) for v in values]
        )

    with sim.profile(topology="dgx-h100") as prof:
        strategy.run(fn)
    (step,) = prof.steps
    return [(r.dtype, r.nbytes) for r in step.items if isinstance(r, CollectiveRecord)]


def test_replica_context_all_reduce_of_a_list_packs_as_batch_reduce_to_does():
    """TF's ReplicaContext.all_reduce is a merge_call into batch_reduce_to: the same packs."""
    values = [np.ones(10, np.float32), np.ones(3, np.float32), np.ones(4, np.int32)]
    for cross_device_ops in (
        tf.distribute.NcclAllReduce(num_packs=1),
        tf.distribute.NcclAllReduce(num_packs=2),
        tf.distribute.NcclAllReduce(num_packs=0),
        tf.distribute.ReductionToOneDevice(),
    ):
        assert _replica_context_packs(cross_device_ops, values) == _recorded_packs(
            cross_device_ops, values
        ), cross_device_ops


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 4),
    num_packs=st.integers(0, 3),
    specs=value_specs,
    op=st.sampled_from(["SUM", "MEAN"]),
    seed=st.integers(0, 2**16),
)
def test_replica_context_all_reduce_of_a_list_has_the_bits_of_batch_reduce_to(
    n, num_packs, specs, op, seed
):
    per_value = _per_replica_arrays(np.random.default_rng(seed), specs, n)
    strategy = tf.distribute.MirroredStrategy(
        [f"GPU:{i}" for i in range(n)], cross_device_ops=tf.distribute.NcclAllReduce(num_packs)
    )

    def fn():
        ctx = tf.distribute.get_replica_context()
        r = int(ctx.replica_id_in_sync_group)
        return ctx.all_reduce(op, [tf.constant(arrays[r]) for arrays in per_value])

    in_replicas = strategy.experimental_local_results(strategy.run(fn))
    values = _distributed(strategy, per_value)
    with strategy.scope():
        destination = tf.Variable(0.0)
    batched = strategy.extended.batch_reduce_to(op, [(v, destination) for v in values])
    for r, replica_result in enumerate(in_replicas):
        for got, want in zip(replica_result, batched, strict=True):
            want = strategy.experimental_local_results(want)[r] if n > 1 else want
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_the_gradient_of_a_list_all_reduce_is_one_all_reduce_of_every_upstream_gradient():
    """A replica whose loss uses only some of the results still all-reduces every upstream
    gradient (zeros for the rest) in one call, as TF's custom gradient does: the replicas
    make the same calls, and an input feeding only an unused result gets zeros, not None."""
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0])

    def fn():
        ctx = tf.distribute.get_replica_context()
        scale = tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0
        with tf.GradientTape() as tape:
            ra, rb = ctx.all_reduce("SUM", [a * scale, b * scale])
            loss = tf.reduce_sum(ra * ra)  # rb unused
        return tape.gradient(loss, [a, b])

    with sim.profile(topology="dgx-h100") as prof:
        grads = strategy.run(fn)
    (step,) = prof.steps
    reduces = [r.nbytes for r in step.items if isinstance(r, CollectiveRecord)]
    assert reduces == [12, 12]  # forward: a and b packed; backward: d(ra) and d(rb) packed
    ga, gb = (strategy.experimental_local_results(g) for g in grads)
    # ra = 3a on both replicas; d loss/d ra = 6a, all-reduced: 12a; times each scale
    np.testing.assert_allclose(ga[0].numpy(), [12.0, 24.0])
    np.testing.assert_allclose(ga[1].numpy(), [24.0, 48.0])
    np.testing.assert_array_equal(gb[0].numpy(), [0.0])
