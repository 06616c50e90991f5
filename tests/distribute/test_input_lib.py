"""Distributed datasets: TF's split of global batches over replicas, devices, end of data."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import errors
from simdist.core.device import canonical_name
from simdist.data.options import AutoShardPolicy
from simdist.distribute.input_context import InputOptions, InputReplicationMode
from simdist.distribute.input_lib import (
    DistributedDataset,
    DistributedDatasetsFromFunction,
    PerReplicaSpec,
    distribute_values_from_function,
)
from simdist.distribute.values import PerReplica

GPUS = tuple(f"GPU:{i}" for i in range(8))


# --- the expected rules, restated plainly ------------------------------------------------
def global_batches(n, g, drop):
    """The global batch sizes of range(n).batch(g, drop)."""
    sizes = [g] * (n // g)
    if n % g and not drop:
        sizes.append(n % g)
    return sizes


def split_each_batch_sizes(n, g, drop, replicas):
    """Default policy (AUTO -> DATA): every batch of b cut into ceil(b/N) pieces."""
    steps = []
    for b in global_batches(n, g, drop):
        c = -(-b // replicas)
        steps.append([max(0, min(c, b - k * c)) for k in range(replicas)])
    return steps


def by_sizes_steps(n, g, drop, replicas):
    """Policy OFF: the elements re-cut by sizes ceil/floor(G/N) cycling; empty fill at end."""
    floor, ceil_count = divmod(g, replicas)
    cycle = [floor + 1] * ceil_count + [floor] * (replicas - ceil_count)
    left = sum(global_batches(n, g, drop))
    out, i = [], 0
    while True:
        want = cycle[i % replicas]
        i += 1
        if want > 0 and left == 0:
            break
        take = min(want, left)
        out.append(take)
        left -= take
    steps = [out[k : k + replicas] for k in range(0, len(out), replicas)]
    return [s + [0] * (replicas - len(s)) for s in steps]


def dataset(n, g, drop, policy=None):
    x = np.arange(n, dtype=np.int64)
    y = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
    ds = tf.data.Dataset.from_tensor_slices({"x": x, "y": y}).batch(g, drop_remainder=drop)
    if policy is not None:
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = policy
        ds = ds.with_options(options)
    return ds


def components(step, replicas):
    """Each replica's element of a step (a PerReplica structure, or plain for one)."""
    if replicas == 1:
        return [step]
    return [{k: v.values[r] for k, v in step.items()} for r in range(replicas)]


@given(
    n=st.integers(0, 40),
    g=st.integers(1, 12),
    replicas=st.integers(1, 8),
    drop=st.booleans(),
    off=st.booleans(),
)
def test_every_element_once_in_order_with_tf_sizes(n, g, replicas, drop, off):
    policy = AutoShardPolicy.OFF if off else None
    dist = DistributedDataset(dataset(n, g, drop, policy), GPUS[:replicas])
    steps = [components(s, replicas) for s in dist]
    sizes = [[int(c["x"].shape[0]) for c in step] for step in steps]
    if replicas == 1:
        expected = [[b] for b in global_batches(n, g, drop)]
    elif off:
        expected = by_sizes_steps(n, g, drop, replicas)
    else:
        expected = split_each_batch_sizes(n, g, drop, replicas)
    assert sizes == expected
    xs = [c["x"].numpy() for step in steps for c in step]
    ys = [c["y"].numpy() for step in steps for c in step]
    kept = sum(global_batches(n, g, drop))
    assert np.concatenate(xs or [np.zeros(0, np.int64)]).tolist() == list(range(kept))
    for step in steps:
        for r, c in enumerate(step):
            assert c["x"].dtype == tf.int64 and c["y"].dtype == tf.float32
            assert c["y"].shape[1:] == (3,)  # empty batches keep the trailing shape
            assert c["x"].device == canonical_name(GPUS[r])
    assert all(y.shape[0] == x.shape[0] for x, y in zip(xs, ys, strict=True))
    again = [components(s, replicas) for s in dist]  # a new epoch restarts
    assert [[int(c["x"].shape[0]) for c in step] for step in again] == sizes


def test_api_page_example_range_4_batch_2_on_two_gpus():
    dist = DistributedDataset(tf.data.Dataset.range(4).batch(2), ("GPU:0", "GPU:1"))
    steps = list(dist)
    assert all(isinstance(s, PerReplica) for s in steps)
    got = [[t.numpy().tolist() for t in s.values] for s in steps]
    assert got == [[[0], [1]], [[2], [3]]]
    assert steps[0].values[0].dtype == tf.int64
    assert steps[0].values[1].device == "/job:localhost/replica:0/task:0/device:GPU:1"
    spec = tf.TensorSpec([None], tf.int64)
    assert dist.element_spec == PerReplicaSpec(spec, spec)


def test_one_replica_gives_plain_values_and_needs_no_batch():
    dist = DistributedDataset(tf.data.Dataset.range(3), ("GPU:0",))
    assert [t.numpy() for t in dist] == [0, 1, 2]
    assert dist.element_spec == tf.TensorSpec([], tf.int64)


def test_static_per_replica_spec_when_divisible_and_dropped():
    dist = DistributedDataset(tf.data.Dataset.range(16).batch(8, drop_remainder=True), GPUS[:4])
    assert dist.element_spec == PerReplicaSpec(*[tf.TensorSpec([2], tf.int64)] * 4)


def test_unbatched_dataset_is_refused():
    with pytest.raises(ValueError, match="Call the `batch` method"):
        DistributedDataset(tf.data.Dataset.range(8), GPUS[:2])
    vectors = tf.data.Dataset.from_tensor_slices(np.zeros((8, 4), np.float32))
    with pytest.raises(ValueError, match="no `batch` or `padded_batch`"):
        DistributedDataset(vectors, GPUS[:2])
    with pytest.raises(TypeError):
        DistributedDataset([1, 2, 3], GPUS[:2])


def test_iterator_protocol_and_end_of_data():
    it = iter(DistributedDataset(tf.data.Dataset.range(3).batch(2), GPUS[:2]))
    first = it.get_next()
    assert [t.numpy().tolist() for t in first.values] == [[0], [1]]
    last = it.next()
    assert [t.numpy().tolist() for t in last.values] == [[2], []]
    assert not it.get_next_as_optional().has_value().numpy()
    with pytest.raises(errors.OutOfRangeError):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)
    it = iter(DistributedDataset(tf.data.Dataset.range(2).batch(2), GPUS[:2]))
    opt = it.get_next_as_optional()
    assert opt.has_value().numpy()
    assert [t.numpy().tolist() for t in opt.get_value().values] == [[0], [1]]


def test_fetch_to_device_false_keeps_values_on_the_host():
    options = InputOptions(experimental_fetch_to_device=False)
    dist = DistributedDataset(tf.data.Dataset.range(2).batch(2), GPUS[:2], options)
    step = next(iter(dist))
    assert {t.device for t in step.values} == {"/job:localhost/replica:0/task:0/device:CPU:0"}
    with pytest.raises(NotImplementedError):
        DistributedDataset(
            tf.data.Dataset.range(2).batch(2),
            GPUS[:2],
            InputOptions(experimental_replication_mode=InputReplicationMode.PER_REPLICA),
        )


def test_data_sharding_over_workers_interleaves_slices():
    """DATA: worker w's replica r gets slice w + r*W of each global batch (legacy split)."""
    ds = tf.data.Dataset.range(16).batch(8)
    got = {}
    for w in range(2):
        dist = DistributedDataset(ds, GPUS[:2], num_workers=2, worker_index=w)
        got[w] = [[t.numpy().tolist() for t in s.values] for s in dist]
    assert got[0] == [[[0, 1], [4, 5]], [[8, 9], [12, 13]]]
    assert got[1] == [[[2, 3], [6, 7]], [[10, 11], [14, 15]]]
    # FILE on an in-memory pipeline: TF's NotFound when the dataset is distributed.
    with pytest.raises(errors.NotFoundError, match="unshardable source dataset: RangeDataset"):
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = AutoShardPolicy.FILE
        DistributedDataset(ds.with_options(options), GPUS[:2], num_workers=2, worker_index=0)


def test_one_replica_per_worker_is_still_wrapped():
    dist = DistributedDataset(
        tf.data.Dataset.range(4).batch(2), GPUS[:1], num_workers=2, worker_index=1
    )
    step = next(iter(dist))
    assert isinstance(step, PerReplica) and step.values[0].numpy().tolist() == [1]


def test_datasets_from_function_round_robin_and_partial_steps():
    seen = []

    def dataset_fn(ctx):
        seen.append((ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync))
        return tf.data.Dataset.range(5).batch(ctx.get_per_replica_batch_size(2))

    dist = DistributedDatasetsFromFunction(dataset_fn, GPUS[:2])
    assert seen == [(1, 0, 2)]
    got = [[t.numpy().tolist() for t in s.values] for s in dist]
    assert got == [[[0], [1]], [[2], [3]], [[4], []]]
    assert len(seen) == 1  # iterating does not call dataset_fn again


def test_datasets_from_function_static_shapes_end_without_partial_step():
    def dataset_fn(ctx):
        return tf.data.Dataset.range(5).batch(1, drop_remainder=True)

    dist = DistributedDatasetsFromFunction(dataset_fn, GPUS[:2])
    got = [[t.numpy().tolist() for t in s.values] for s in dist]
    assert got == [[[0], [1]], [[2], [3]]]  # TF: no partial handling for static shapes
    opt = iter(dist)
    for _ in range(2):
        opt.get_next()
    partial = opt.get_next_as_optional()  # get_next_as_optional always fills
    assert [t.numpy().tolist() for t in partial.get_value().values] == [[4], []]


def test_datasets_from_function_per_replica_mode():
    contexts = []

    def dataset_fn(ctx):
        contexts.append((ctx.num_input_pipelines, ctx.input_pipeline_id))
        return tf.data.Dataset.range(2).map(lambda x: x + 10 * ctx.input_pipeline_id).batch(1)

    options = InputOptions(experimental_replication_mode=InputReplicationMode.PER_REPLICA)
    dist = DistributedDatasetsFromFunction(dataset_fn, GPUS[:3], options)
    assert contexts == [(3, 0), (3, 1), (3, 2)]
    got = [[t.numpy().tolist() for t in s.values] for s in dist]
    assert got == [[[0], [10], [20]], [[1], [11], [21]]]
    with pytest.raises(TypeError, match="must return a tf.data.Dataset"):
        DistributedDatasetsFromFunction(lambda ctx: [1, 2], GPUS[:2])


def test_values_from_function_api_page_examples():
    def replica_ids(ctx):
        return tf.constant(ctx.replica_id_in_sync_group)

    v = distribute_values_from_function(replica_ids, ["GPU:0", "GPU:1"])
    assert [t.numpy() for t in v.values] == [0, 1]
    assert v.values[1].device == canonical_name("GPU:1")
    ones = distribute_values_from_function(lambda ctx: tf.constant(1.0), ["GPU:0", "GPU:1"])
    assert [t.numpy() for t in ones.values] == [1.0, 1.0]
    array_value = np.array([3.0, 2.0, 1.0])
    picked = distribute_values_from_function(
        lambda ctx: array_value[ctx.replica_id_in_sync_group], ["GPU:0", "GPU:1"]
    )
    assert picked.values == (3.0, 2.0)
    counts = distribute_values_from_function(lambda ctx: ctx.num_replicas_in_sync, GPUS[:2])
    assert counts.values == (2, 2)
    single = distribute_values_from_function(lambda ctx: 5, GPUS[:1])
    assert isinstance(single, PerReplica) and single.values == (5,)
    assert distribute_values_from_function(lambda ctx: 5, GPUS[:1], always_wrap=False) == 5
    nested = distribute_values_from_function(
        lambda ctx: {"a": ctx.replica_id_in_sync_group}, GPUS[:2], num_workers=2, worker_index=1
    )
    assert nested["a"].values == (2, 3)
    with pytest.raises(ValueError, match="different structures"):
        distribute_values_from_function(
            lambda ctx: (1,) * (ctx.replica_id_in_sync_group + 1), GPUS[:2]
        )


def test_datasets_from_function_context_across_workers():
    """TF: input_pipeline_id = worker index, num_replicas_in_sync = W * L; the function's
    dataset is used as it is (no auto-sharding), elements go to local replicas in turn."""
    for w in range(2):
        seen = []

        def dataset_fn(ctx, seen=seen):
            seen.append(
                (
                    ctx.num_input_pipelines,
                    ctx.input_pipeline_id,
                    ctx.num_replicas_in_sync,
                    ctx.get_per_replica_batch_size(12),
                )
            )
            ds = tf.data.Dataset.range(12).batch(ctx.get_per_replica_batch_size(12))
            return ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)

        dist = DistributedDatasetsFromFunction(dataset_fn, GPUS[:3], num_workers=2, worker_index=w)
        assert seen == [(2, w, 6, 2)]
        steps = [[t.numpy().tolist() for t in s.values] for s in dist]
        shards = [[2 * k, 2 * k + 1] for k in range(w, 6, 2)]
        assert steps == [shards]
