"""Reference input splitting: the API page's example, TF's documented rebatch examples, laws."""

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given
from hypothesis import strategies as st


def as_lists(steps):
    return [[b.tolist() for b in step] for step in steps]


def test_range_4_batch_2_over_two_replicas_times_two():
    # API page: dataset range(4).batch(2) on 2 replicas, replica_fn = x * 2 prints
    # PerReplica {0: [0], 1: [2]} then {0: [4], 1: [6]}.
    steps = ref.distribute_dataset(np.arange(4, dtype=np.int64), 2, 2)
    assert as_lists([[x * 2 for x in step] for step in steps]) == [[[0], [2]], [[4], [6]]]
    assert all(b.shape == (1,) and b.dtype == np.int64 for step in steps for b in step)


def test_per_replica_batch_sizes_for_worker():
    # TF's batch_sizes_for_worker docstring: G=7, W=2, R=2 -> worker 0 [2,2,2,1], worker 1
    # [2,1,2,2]; one worker with 4 replicas: [2,2,2,1].
    assert ref.per_replica_batch_sizes(7, 4) == [2, 2, 2, 1]
    assert ref.per_replica_batch_sizes(7, 2, num_workers=2, worker_index=0) == [2, 2, 2, 1]
    assert ref.per_replica_batch_sizes(7, 2, num_workers=2, worker_index=1) == [2, 1, 2, 2]
    assert ref.per_replica_batch_sizes(3, 4) == [1, 1, 1, 0]
    assert ref.per_replica_batch_sizes(8, 4) == [2, 2, 2, 2]
    with pytest.raises(ValueError):
        ref.per_replica_batch_sizes(8, 2, num_workers=2, worker_index=2)


def test_rebatch_crosses_input_batches():
    # Dataset.rebatch docs: range(6).batch(4).rebatch([2, 1, 1]) -> [0,1], [2], [3], [4,5].
    out = ref.rebatch(ref.batch(np.arange(6), 4), [2, 1, 1])
    assert [b.tolist() for b in out] == [[0, 1], [2], [3], [4, 5]]
    out = ref.rebatch(ref.batch(np.arange(5), 4), [2, 2])
    assert [b.tolist() for b in out] == [[0, 1], [2, 3], [4]]
    out = ref.rebatch(ref.batch(np.arange(5), 4), [2, 2], drop_remainder=True)
    assert [b.tolist() for b in out] == [[0, 1], [2, 3]]


def test_rebatch_zero_sizes_emit_empty_batches_until_input_is_exhausted():
    out = ref.rebatch([np.arange(3)], [1, 1, 1, 0])
    assert [b.tolist() for b in out] == [[0], [1], [2], []]
    # A short batch marks the end of input: no empty batch follows it.
    out = ref.rebatch([np.arange(3)], [2, 2, 0])
    assert [b.tolist() for b in out] == [[0, 1], [2]]


def test_legacy_rebatch_splits_each_batch_by_ceil():
    # _LegacyRebatchDataset docstring: range(8).batch(4) over 3 -> [0,1],[2,3],[],[4,5],[6,7],[].
    out = ref.legacy_rebatch(ref.batch(np.arange(8), 4), 3)
    assert [b.tolist() for b in out] == [[0, 1], [2, 3], [], [4, 5], [6, 7], []]
    sizes = [len(b) for b in ref.legacy_rebatch([np.arange(6), np.arange(5)], 4)]
    assert sizes == [2, 2, 2, 0, 2, 2, 1, 0]


def test_short_final_batch_fills_replicas_in_order():
    # 10 elements, global batch 7 over 4 replicas, policy OFF (declared sizes): [2,2,2,1]
    # then the last 3 as [2,1,0,0].
    steps = ref.distribute_dataset(np.arange(10), 7, 4, auto_shard_policy="OFF")
    assert as_lists(steps) == [[[0, 1], [2, 3], [4, 5], [6]], [[7, 8], [9], [], []]]
    # The default AUTO policy splits each actual batch in ceil(b/4) slices (TF 2.21 prints
    # exactly this for range(10).batch(7) on 4 logical CPUs).
    steps = ref.distribute_dataset(np.arange(10), 7, 4)
    assert as_lists(steps) == [[[0, 1], [2, 3], [4, 5], [6]], [[7], [8], [9], []]]
    assert as_lists(ref.distribute_dataset(np.arange(6), 6, 4)) == [[[0, 1], [2, 3], [4, 5], []]]
    assert ref.distribute_batch_sizes([7, 3], 4, 7) == [[2, 2, 2, 1], [2, 1, 0, 0]]
    # API page: a last batch of 6 over 2 replicas of declared 8 -> [0..3] and [4, 5].
    assert ref.distribute_batch_sizes([8, 6], 2, 8) == [[4, 4], [4, 2]]


def test_empty_batches_keep_element_shape_and_dtype():
    elements = np.arange(10, dtype=np.float32).reshape(5, 2)
    steps = ref.distribute_dataset(elements, 4, 4)
    last = steps[-1]
    assert [b.shape for b in last] == [(1, 2), (0, 2), (0, 2), (0, 2)]
    assert all(b.dtype == np.float32 for b in last)


def test_drop_remainder_drops_the_partial_global_batch():
    steps = ref.distribute_dataset(np.arange(10), 4, 2, drop_remainder=True)
    assert as_lists(steps) == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]


def test_unknown_batch_size_uses_the_legacy_split():
    assert ref.distribute_batch_sizes([6, 5], 4, None) == [[2, 2, 2, 0], [2, 2, 1, 0]]
    # With B known the same data would be cut as [2,2,1,1] twice ... up to the stream end.
    assert ref.distribute_batch_sizes([6, 6], 4, 6) == [[2, 2, 1, 1], [2, 2, 1, 1]]


def test_get_per_replica_batch_size():
    assert ref.get_per_replica_batch_size(64, 4) == 16
    with pytest.raises(ValueError) as info:
        ref.get_per_replica_batch_size(10, 4)
    assert str(info.value) == (
        "The `global_batch_size` 10 is not divisible by `num_replicas_in_sync` 4 "
    )


def test_scalar_elements_cannot_be_rebatched():
    with pytest.raises(ValueError, match="batch"):
        ref.distribute_batches([np.int64(1)], 2, 1)


@st.composite
def dataset_case(draw):
    n_elements = draw(st.integers(0, 40))
    batch_size = draw(st.integers(1, 12))
    replicas = draw(st.integers(1, 8))
    drop = draw(st.booleans())
    return n_elements, batch_size, replicas, drop


@given(dataset_case(), st.sampled_from(["AUTO", "OFF"]))
def test_splitting_preserves_order_and_sizes(case, policy):
    n, b, replicas, drop = case
    steps = ref.distribute_dataset(
        np.arange(n), b, replicas, drop_remainder=drop, auto_shard_policy=policy
    )
    expected_batches = ref.batch(np.arange(n), b, drop)
    assert len(steps) == len(expected_batches)
    for step, global_batch in zip(steps, expected_batches, strict=True):
        assert len(step) == replicas
        # Concatenating the replicas in order gives back the global batch (order and
        # multiset preserved, sizes sum to B).
        np.testing.assert_array_equal(np.concatenate(step), global_batch)
        sizes = [len(x) for x in step]
        if policy == "AUTO":  # each actual batch in slices of ceil(b / replicas)
            piece = -(-len(global_batch) // replicas)
            assert sizes == [
                max(0, min(piece, len(global_batch) - i * piece)) for i in range(replicas)
            ]
        elif len(global_batch) == b:
            assert sizes == ref.per_replica_batch_sizes(b, replicas)
            assert max(sizes) - min(sizes) <= 1
        else:  # partial: filled in order, later replicas get fewer or none
            assert sizes == sorted(sizes, reverse=True)


@given(st.lists(st.integers(0, 9), min_size=1, max_size=6), st.integers(1, 8))
def test_legacy_split_keeps_batch_boundaries(sizes, replicas):
    steps = ref.distribute_batch_sizes(sizes, replicas, None)
    assert [sum(step) for step in steps] == sizes


def test_known_batch_size_recuts_across_a_short_batch_in_the_middle():
    # RebatchDatasetV2 takes elements across input-batch boundaries: a short batch in the
    # middle (e.g. from concatenate) shifts every later cut.
    steps = ref.distribute_batches([np.arange(4), np.arange(4, 6), np.arange(6, 10)], 2, 4)
    assert as_lists(steps) == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], []]]
    legacy = ref.distribute_batches([np.arange(4), np.arange(4, 6), np.arange(6, 10)], 2, None)
    assert as_lists(legacy) == [[[0, 1], [2, 3]], [[4], [5]], [[6, 7], [8, 9]]]
