"""Auto-sharding across workers: expected values observed in TF 2.21 (each worker's pipeline
emulated in one process: input_lib's rebatch, then ``input_ops.auto_shard_dataset``)."""

import logging
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simdist_reference import sharding as ref

import simdist as tf
from simdist import errors
from simdist.data.options import AutoShardPolicy
from simdist.distribute.auto_shard import SHARD_HINT, auto_shard_dataset, shard_stream
from simdist.distribute.explain_input import run_input_cluster
from simdist.distribute.input_lib import DistributedDataset

P = AutoShardPolicy


def with_policy(ds, policy):
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = policy
    return ds.with_options(options)


def write_files(directory, sizes, start=0):
    """Files of lines ``"<id>"`` numbered file after file; returns the paths."""
    paths = []
    for i, size in enumerate(sizes):
        path = os.path.join(directory, f"f{i:03d}.txt")
        with open(path, "w") as f:
            f.write("".join(f"{k}\n" for k in range(start, start + size)))
        start += size
        paths.append(path)
    return paths


def tf_files(directory, num_files=5, lines=3):
    """TF experiment's files: file i holds lines "i0", "i1", ..."""
    paths = []
    for i in range(num_files):
        path = os.path.join(directory, f"f{i}.txt")
        with open(path, "w") as f:
            f.write("".join(f"{i}{j}\n" for j in range(lines)))
        paths.append(path)
    return paths


def per_worker(ds, workers, local=1):
    """Each worker's own stream of per-replica batches (what TF's worker pipeline yields),
    read worker by worker without the cross-worker end-of-data agreement."""
    devices = tuple(f"GPU:{i}" for i in range(local))
    out = []
    for w in range(workers):
        pieces = []
        for step in DistributedDataset(ds, devices, num_workers=workers, worker_index=w):
            for v in step.values:
                pieces.append(
                    [x.decode() if isinstance(x, bytes) else x for x in v.numpy().tolist()]
                )
        out.append(pieces)
    return out


def drop_trailing_empty(pieces):
    while pieces and pieces[-1] == []:
        pieces = pieces[:-1]
    return pieces


# --- DATA and OFF (TF 2.21 outputs) -------------------------------------------------------
def test_data_keeps_every_wth_slice_after_the_legacy_split():
    ds = with_policy(tf.data.Dataset.range(10).batch(4), P.DATA)
    assert per_worker(ds, 2) == [[[0, 1], [4, 5], [8]], [[2, 3], [6, 7], [9]]]
    ds = with_policy(tf.data.Dataset.range(10).batch(3), P.DATA)
    assert per_worker(ds, 3) == [[[0], [3], [6], [9]], [[1], [4], [7], []], [[2], [5], [8], []]]
    # TF: W2 x L2 -> worker 0 [0],[2],[4],[6],[8],[] and worker 1 [1],[3],[5],[7],[9],[].
    ds = tf.data.Dataset.range(10).batch(4)
    assert per_worker(ds, 2, 2) == [[[0], [2], [4], [6], [8], []], [[1], [3], [5], [7], [9], []]]
    ds = with_policy(tf.data.Dataset.range(10).batch(6, drop_remainder=True), P.DATA)
    assert per_worker(ds, 2, 3) == [[[0], [2], [4]], [[1], [3], [5]]]


def test_data_with_fewer_slices_than_workers_leaves_some_empty():
    ds = with_policy(tf.data.Dataset.range(2).batch(4), P.DATA)
    assert per_worker(ds, 3) == [[[0]], [[1]], [[]]]
    assert per_worker(with_policy(tf.data.Dataset.range(0).batch(4), P.DATA), 3) == [[], [], []]


def test_off_gives_everyone_everything_cut_by_the_workers_sizes():
    ds = with_policy(tf.data.Dataset.range(10).batch(4), P.OFF)
    expected = [[k] for k in range(10)]
    got = per_worker(ds, 2, 2)
    assert drop_trailing_empty(got[0]) == expected and drop_trailing_empty(got[1]) == expected
    # batch_sizes_for_worker(7, 2, 2, w): worker 0 [2,2,2,1], worker 1 [2,1,2,2].
    ds = with_policy(tf.data.Dataset.range(7).batch(7), P.OFF)
    assert per_worker(ds, 2, 2) == [[[0, 1], [2, 3], [4, 5], [6]], [[0, 1], [2], [3, 4], [5, 6]]]


def test_off_leading_zero_sizes_emit_empty_batches_even_on_empty_input():
    # TF 2.21, G=1 over 2 workers (sizes [1, 0] and [0, 1]): range(0) -> [], [[]];
    # range(1) -> [[0], []] and [[], [0], []].
    empty = with_policy(tf.data.Dataset.range(0).batch(1), P.OFF)
    assert per_worker(empty, 2) == [[], [[]]]
    one = with_policy(tf.data.Dataset.range(1).batch(1), P.OFF)
    assert per_worker(one, 2) == [[[0], []], [[], [0], []]]


def test_auto_on_memory_falls_back_to_data_with_tf_warning(caplog):
    ds = tf.data.Dataset.range(8).batch(4)
    with caplog.at_level(logging.WARNING, logger="simdist"):
        result = auto_shard_dataset(ds, 2, 0)
    assert result.policy == P.DATA and result.dataset is ds
    assert "AUTO sharding policy will apply DATA sharding policy" in caplog.text
    assert "unshardable source dataset: RangeDataset" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="simdist"):
        assert auto_shard_dataset(ds, 1, 0).policy == P.DATA
    assert caplog.text == ""  # one worker: nothing is sharded, nothing to warn about


# --- FILE (TF 2.21 outputs) ---------------------------------------------------------------
def test_file_gives_worker_w_files_w_w_plus_n(tmp_path):
    files = tf_files(tmp_path)
    ds = tf.data.TextLineDataset(files).batch(4)
    assert auto_shard_dataset(ds, 2, 0).policy == P.FILE
    assert per_worker(ds, 2) == [
        [["00", "01"], ["02", "20"], ["21", "22"], ["40", "41"], ["42"]],
        [["10", "11"], ["12", "30"], ["31", "32"]],
    ]
    # Sizes per worker from batch_sizes_for_worker(4, 3, 1, w): [2,1,1], [1,1,2], [1,2,1].
    ds = with_policy(tf.data.TextLineDataset(files).batch(4), P.FILE)
    assert per_worker(ds, 3) == [
        [["00", "01"], ["02"], ["30"], ["31", "32"]],
        [["10"], ["11"], ["12", "40"], ["41"], ["42"]],
        [["20"], ["21", "22"]],
    ]
    got = per_worker(ds, 2, 2)
    assert drop_trailing_empty(got[0]) == [[x] for x in "00 01 02 20 21 22 40 41 42".split()]
    assert drop_trailing_empty(got[1]) == [[x] for x in "10 11 12 30 31 32".split()]


def test_file_through_list_files_and_interleave(tmp_path):
    files = tf_files(tmp_path)
    names = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    ds = with_policy(names.interleave(tf.data.TextLineDataset, cycle_length=2).batch(4), P.FILE)
    assert per_worker(ds, 2) == [
        [["00", "20"], ["01", "21"], ["02", "22"], ["40", "41"], ["42"]],
        [["10", "30"], ["11", "31"], ["12", "32"]],
    ]
    assert len(files) == 5


def test_list_files_shuffle_moves_after_the_shard(tmp_path):
    """TF removes the shuffle of the names and puts it after the shard: worker 0 reads
    files {0, 2, 4} in a shuffled order, worker 1 files {1, 3}, whatever the seed."""
    tf_files(tmp_path)
    for seed in (3, None):
        names = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=True, seed=seed)
        ds = with_policy(names.flat_map(tf.data.TextLineDataset).batch(15), P.FILE)
        got = [sorted(x for piece in w for x in piece) for w in per_worker(ds, 2)]
        assert got[0] == sorted(f"{i}{j}" for i in (0, 2, 4) for j in range(3))
        assert got[1] == sorted(f"{i}{j}" for i in (1, 3) for j in range(3))


def test_fewer_files_than_workers_is_tf_error_under_file_and_auto(tmp_path):
    files = tf_files(tmp_path, num_files=2)
    for policy in (P.FILE, P.AUTO):
        ds = with_policy(tf.data.TextLineDataset(files).batch(4), policy)
        for w, count in ((0, 1), (1, 2)):
            dist = DistributedDataset(ds, ("GPU:0",), num_workers=3, worker_index=w)
            with pytest.raises(errors.InvalidArgumentError) as info:
                next(iter(dist))
            assert str(info.value).startswith(
                f"Could not apply FILE based sharding: the dataset only has {count} file(s), "
                "which is not enough for the required 3 shards/workers."
            )
        last = DistributedDataset(ds, ("GPU:0",), num_workers=3, worker_index=2)
        assert list(last) == []  # TF: the worker without a file just gets nothing
        with pytest.raises(errors.InvalidArgumentError, match="only has 1 file"):
            run_input_cluster(ds, 3, 1)


def test_file_on_memory_data_is_not_found_at_distribute_time():
    for ds in (
        tf.data.Dataset.range(10).batch(4),
        tf.data.Dataset.range(4).map(lambda x: x).batch(2),
    ):
        with pytest.raises(errors.NotFoundError, match="unshardable source dataset: RangeDataset"):
            DistributedDataset(with_policy(ds, P.FILE), ("GPU:0",), num_workers=2, worker_index=0)
    # One worker: FILE changes nothing (TF skips the rewrite).
    ds = with_policy(tf.data.Dataset.range(4).batch(2), P.FILE)
    assert auto_shard_dataset(ds, 1, 0).dataset is ds


def test_file_walk_stops_at_unknown_nodes_and_enters_zip(tmp_path):
    files = tf_files(tmp_path, num_files=4, lines=2)
    lines = tf.data.TextLineDataset(files)
    # enumerate is a zip with a range: unshardable (TF: NotFound; AUTO falls back to DATA).
    with pytest.raises(errors.NotFoundError, match="RangeDataset"):
        auto_shard_dataset(with_policy(lines.enumerate().batch(2), P.FILE), 2, 0)
    # zip of two file pipelines: both sharded.
    both = tf.data.Dataset.zip((lines, lines)).map(lambda a, b: a).batch(100)
    got = [sorted(x for p in w for x in p) for w in per_worker(with_policy(both, P.FILE), 2)]
    assert got == [["00", "01", "20", "21"], ["10", "11", "30", "31"]]
    # unbatch passes through (TF 2.21).
    ub = with_policy(lines.batch(2).unbatch().batch(100), P.FILE)
    assert [sorted(x for p in w for x in p) for w in per_worker(ub, 2)] == got


def test_nested_flat_map_shards_lines_after_the_inner_reader(tmp_path):
    """TF's rule for flat_map over a reader fed by from_tensor_slices (TextLineDataset(list)
    is one): the shard goes right after the reader, so workers share lines, not files."""
    files = tf_files(tmp_path, num_files=4, lines=2)
    one = tf.data.Dataset.from_tensors
    ds = with_policy(tf.data.TextLineDataset(files).flat_map(one).batch(100), P.FILE)
    assert per_worker(ds, 2) == [[["00", "10", "20", "30"]], [["01", "11", "21", "31"]]]
    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4]).flat_map(one).flat_map(one)
    assert per_worker(with_policy(ds.batch(100), P.FILE), 2) == [[[1, 3]], [[2, 4]]]
    # A reader built inside the function (not from its argument): the outer elements are
    # sharded, so every worker reads all files once (range(2) -> one element each).
    inner = tf.data.Dataset.range(2).flat_map(lambda i: tf.data.TextLineDataset(files))
    got = per_worker(with_policy(inner.batch(100), P.FILE), 2)
    assert got[0] == got[1] == [["00", "01", "10", "11", "20", "21", "30", "31"]]


def test_hint_replaces_shard_hint_and_leaves_other_pipelines_alone():
    ds = with_policy(tf.data.Dataset.range(10).batch(2), P.HINT)
    result = auto_shard_dataset(ds, 2, 1)
    assert result.policy == P.HINT and result.dataset is ds  # no hint: not sharded (TF)
    everything = [[k] for k in range(10)]  # TF 2.21: sizes [1, 1] on each worker
    assert per_worker(ds, 2) == [everything, everything]
    hinted = tf.data.Dataset.range(10).shard(tf.data.experimental.SHARD_HINT, 0)
    assert tf.data.experimental.SHARD_HINT == SHARD_HINT == -1
    with pytest.raises(errors.FailedPreconditionError, match="AutoShardPolicy.HINT"):
        list(hinted)  # TF's error outside experimental_distribute_dataset
    ds = with_policy(hinted.batch(2), P.HINT)
    # TF 2.21: range(10).shard(SHARD_HINT, 0).batch(2) over 2 workers x 1 replica.
    assert per_worker(ds, 2) == [[[0], [2], [4], [6], [8]], [[1], [3], [5], [7], [9]]]


def test_shard_stream_requires_non_empty_like_tf():
    assert list(shard_stream(iter(range(7)), 3, 1)) == [1, 4]
    assert list(shard_stream(iter(range(1)), 3, 2)) == []
    with pytest.raises(errors.InvalidArgumentError, match="only has 2 file"):
        list(shard_stream(iter(range(2)), 3, 1))


def test_data_shuffle_with_or_without_seed_keeps_workers_consistent():
    for seed in (7, None):
        ds = with_policy(tf.data.Dataset.range(12).shuffle(12, seed=seed).batch(4), P.DATA)
        seen = [x for w in per_worker(ds, 3) for piece in w for x in piece]
        assert sorted(seen) == list(range(12))  # every element exactly once


# --- property: simdist == reference -------------------------------------------------------
def simdist_steps(steps):
    return [
        [[np.asarray(v).reshape(-1).astype(np.int64).tolist() for v in w] for w in s] for s in steps
    ]


def ref_steps(steps):
    return [[[np.asarray(v).astype(np.int64).tolist() for v in w] for w in s] for s in steps]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 23),
    g=st.integers(1, 8),
    workers=st.integers(1, 4),
    local=st.integers(1, 3),
    drop=st.booleans(),
    policy=st.sampled_from(["AUTO", "DATA", "OFF"]),
)
def test_memory_source_matches_reference(n, g, workers, local, drop, policy):
    ds = with_policy(tf.data.Dataset.range(n).batch(g, drop), P[policy])
    steps, _ = run_input_cluster(ds, workers, local)
    expected = ref.distribute_across_workers(
        g, workers, local, elements=np.arange(n), policy=policy, drop_remainder=drop
    )
    assert simdist_steps(steps) == ref_steps(expected)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 5), min_size=1, max_size=6),
    g=st.integers(1, 6),
    workers=st.integers(1, 4),
    local=st.integers(1, 3),
    drop=st.booleans(),
    policy=st.sampled_from(["AUTO", "FILE", "DATA", "OFF"]),
)
def test_file_source_matches_reference(sizes, g, workers, local, drop, policy):
    with tempfile.TemporaryDirectory() as directory:
        files = write_files(directory, sizes)
        lines = tf.data.TextLineDataset(files).map(lambda x: x)
        ds = with_policy(lines.batch(g, drop), P[policy])
        starts = np.cumsum([0, *sizes])
        file_lines = [np.arange(a, b) for a, b in zip(starts[:-1], starts[1:], strict=True)]
        try:
            expected = ref.distribute_across_workers(
                g, workers, local, file_lines=file_lines, policy=policy, drop_remainder=drop
            )
        except ref.FileShardError:
            with pytest.raises(errors.InvalidArgumentError, match="FILE based sharding"):
                run_input_cluster(ds, workers, local)
            return
        steps, _ = run_input_cluster(ds, workers, local)
    assert simdist_steps(steps) == ref_steps(expected)


def test_a_reader_function_that_rejects_stand_ins_is_still_seen_reading_files(tmp_path):
    tf_files(tmp_path)
    names = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)

    def reader(name):
        if not name.numpy().endswith(b".txt"):
            raise ValueError("not one of the listed files")  # a stand-in name is not
        return tf.data.TextLineDataset(name)

    ds = with_policy(names.flat_map(reader).batch(15), P.FILE)
    got = [sorted(x for piece in w for x in piece) for w in per_worker(ds, 2)]
    assert got[1] == sorted(f"{i}{j}" for i in (1, 3) for j in range(3))


def test_a_function_that_fails_on_real_data_raises_when_distributed(tmp_path):
    tf_files(tmp_path)
    names = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)

    def broken(name):
        raise KeyError("the user's bug")

    with pytest.raises(KeyError, match="the user's bug"):
        per_worker(names.flat_map(broken), 2)
