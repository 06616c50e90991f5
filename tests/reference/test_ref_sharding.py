"""Reference input across workers: TF 2.21's observed assignments, and the rules' laws."""

import doctest

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from simdist_reference import sharding as ref


def as_lists(steps):
    return [[[p.tolist() for p in w] for w in s] for s in steps]


def test_docstring_examples():
    assert doctest.testmod(ref).failed == 0


def test_data_w2_l2_matches_tf():
    steps = ref.distribute_across_workers(4, 2, 2, elements=np.arange(10), policy="DATA")
    assert ref.elements_by_worker(steps) == [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]
    assert as_lists(steps)[-1] == [[[8], []], [[9], []]]


def test_file_w3_matches_tf():
    # Files i of 3 lines "i0".."i2" as ids 10*i + j; TF 2.21 worker 0: [00,01],[02],[30],[31,32].
    files = [np.array([10 * i + j for j in range(3)]) for i in range(5)]
    steps = ref.distribute_across_workers(4, 3, 1, file_lines=files, policy="FILE")
    worker0 = [s[0][0].tolist() for s in steps]
    assert worker0 == [[0, 1], [2], [30], [31, 32], []]
    assert [s[2][0].tolist() for s in steps] == [[20], [21, 22], [], [], []]


def test_off_duplicates_and_fewer_files_error():
    steps = ref.distribute_across_workers(7, 2, 2, elements=np.arange(7), policy="OFF")
    assert as_lists(steps) == [[[[0, 1], [2, 3]], [[0, 1], [2]]], [[[4, 5], [6]], [[3, 4], [5, 6]]]]
    with pytest.raises(ref.FileShardError, match="only has 1 file"):
        ref.distribute_across_workers(4, 3, 1, file_lines=[np.arange(3), np.arange(3)])
    assert ref.files_for_worker(2, 3, 2) == []
    with pytest.raises(ref.NoFileToShardError):
        ref.distribute_across_workers(4, 2, 1, elements=np.arange(3), policy="FILE")
    assert ref.applied_policy("auto", False, 2) == "DATA"


@given(
    n=st.integers(0, 30),
    g=st.integers(1, 8),
    workers=st.integers(1, 4),
    local=st.integers(1, 3),
    drop=st.booleans(),
)
def test_data_partitions_and_off_duplicates(n, g, workers, local, drop):
    kept = n - n % g if drop else n
    steps = ref.distribute_across_workers(
        g, workers, local, elements=np.arange(n), policy="DATA", drop_remainder=drop
    )
    seen = sorted(x for w in ref.elements_by_worker(steps) for x in w)
    assert seen == list(range(kept))  # DATA: each element exactly once over the cluster
    assert all(len(w) == workers and all(len(r) == local for r in w) for w in steps)
    off = ref.distribute_across_workers(
        g, workers, local, elements=np.arange(n), policy="OFF", drop_remainder=drop
    )
    for mine in ref.elements_by_worker(off):
        assert mine == list(range(kept))  # OFF: every worker everything, in order


@given(
    sizes=st.lists(st.integers(0, 4), min_size=1, max_size=6),
    g=st.integers(1, 5),
    workers=st.integers(1, 4),
    local=st.integers(1, 3),
)
def test_file_gives_each_worker_its_own_files(sizes, g, workers, local):
    starts = np.cumsum([0, *sizes])
    files = [np.arange(a, b) for a, b in zip(starts[:-1], starts[1:], strict=True)]
    if 1 < workers and len(files) < workers:
        with pytest.raises(ref.FileShardError):
            ref.distribute_across_workers(g, workers, local, file_lines=files, policy="FILE")
        return
    steps = ref.distribute_across_workers(g, workers, local, file_lines=files, policy="FILE")
    for w, mine in enumerate(ref.elements_by_worker(steps)):
        own = files[w::workers] if workers > 1 else files
        assert mine == [int(x) for f in own for x in f]
