"""Reference gather / all_gather / all_reduce: the API page's printed outputs and laws."""

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def test_gather_two_replicas_axis_0():
    # API page: each replica holds [[1], [2]]; gather axis 0 -> shape (4, 1).
    value = np.array([[1], [2]], dtype=np.int32)
    out = ref.gather([value, value], axis=0)
    assert out.shape == (4, 1) and out.dtype == np.int32
    np.testing.assert_array_equal(out, [[1], [2], [1], [2]])


def four_copies():
    single = np.arange(6, dtype=np.int32).reshape(1, 2, 3)
    return [single.copy() for _ in range(4)]


def test_gather_four_replicas_axis_0():
    out = ref.gather(four_copies(), axis=0)
    assert out.shape == (4, 2, 3)
    np.testing.assert_array_equal(out, [[[0, 1, 2], [3, 4, 5]]] * 4)


def test_gather_four_replicas_axis_1():
    out = ref.gather(four_copies(), axis=1)
    assert out.shape == (1, 8, 3)
    np.testing.assert_array_equal(out, [[[0, 1, 2], [3, 4, 5]] * 4])


def test_gather_four_replicas_axis_2():
    out = ref.gather(four_copies(), axis=2)
    assert out.shape == (1, 2, 12)
    np.testing.assert_array_equal(out, [[[0, 1, 2] * 4, [3, 4, 5] * 4]])


def test_shapes_may_differ_only_along_the_axis():
    # API page: shapes (1, 2, 3) and (1, 3, 3) gather along axis 1, not along 0 or 2.
    a, b = np.zeros((1, 2, 3)), np.ones((1, 3, 3))
    assert ref.gather([a, b], axis=1).shape == (1, 5, 3)
    for axis in (0, 2):
        with pytest.raises(ValueError, match="differ outside axis"):
            ref.gather([a, b], axis=axis)


def test_scalars_are_rejected_with_expand_dims_advice():
    with pytest.raises(ValueError, match="expand_dims"):
        ref.gather([np.float32(1), np.float32(2)], axis=0)


def test_gather_rejects_mixed_ranks_dtypes_and_bad_axis():
    with pytest.raises(ValueError, match="ranks"):
        ref.gather([np.zeros((2,)), np.zeros((2, 1))], axis=0)
    with pytest.raises(TypeError, match="dtypes"):
        ref.gather([np.zeros(2, np.float32), np.zeros(2, np.float64)], axis=0)
    with pytest.raises(ValueError, match="out of range"):
        ref.gather([np.zeros((2, 2))], axis=2)
    np.testing.assert_array_equal(
        ref.gather([np.eye(2), np.eye(2)], axis=-1), np.concatenate([np.eye(2)] * 2, axis=1)
    )


def test_gather_tpu_needs_identical_shapes():
    a, b = np.zeros((1, 2)), np.zeros((1, 3))
    assert ref.gather([a, b], axis=1).shape == (1, 5)
    with pytest.raises(ValueError, match="identical shapes"):
        ref.gather_tpu([a, b], axis=1)
    assert ref.gather_tpu([a, a], axis=0).shape == (2, 2)


def test_all_reduce_of_replica_ids():
    # API page: all_reduce("sum", replica_id) on 2 replicas -> 1 on each replica.
    out = ref.all_reduce("sum", [np.int32(0), np.int32(1)])
    assert [int(v) for v in out] == [1, 1]


def test_all_reduce_mean_and_independent_copies():
    out = ref.all_reduce("MEAN", [np.array([1.0, 3.0]), np.array([3.0, 5.0])])
    assert len(out) == 2
    for v in out:
        np.testing.assert_array_equal(v, [2.0, 4.0])
    out[0][0] = 99.0
    assert out[1][0] == 2.0


def test_broadcast_and_split_along():
    copies = ref.broadcast(np.array([1.0, 2.0]), 3)
    assert len(copies) == 3 and all(np.array_equal(c, [1.0, 2.0]) for c in copies)
    parts = ref.split_along(np.arange(5), [2, 0, 3])
    assert [p.tolist() for p in parts] == [[0, 1], [], [2, 3, 4]]
    with pytest.raises(ValueError):
        ref.split_along(np.arange(5), [2, 2])


@st.composite
def gatherable(draw):
    n = draw(st.integers(1, 8))
    rank = draw(st.integers(1, 3))
    axis = draw(st.integers(-rank, rank - 1))
    base = list(draw(hnp.array_shapes(min_dims=rank, max_dims=rank, min_side=0, max_side=3)))
    sizes = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    values = []
    for s in sizes:
        shape = list(base)
        shape[axis] = s
        values.append(draw(hnp.arrays(np.int64, tuple(shape), elements=st.integers(-9, 9))))
    return values, axis, sizes


@given(gatherable())
def test_gather_then_split_round_trips(case):
    values, axis, sizes = case
    gathered = ref.gather(values, axis)
    assert gathered.shape[axis] == sum(sizes)
    for original, piece in zip(values, ref.split_along(gathered, sizes, axis), strict=True):
        np.testing.assert_array_equal(original, piece)


@given(gatherable())
def test_all_gather_gives_every_replica_the_gather(case):
    values, axis, _ = case
    expected = ref.gather(values, axis)
    out = ref.all_gather(values, axis)
    assert len(out) == len(values)
    for v in out:
        np.testing.assert_array_equal(v, expected)
