"""Segment reductions against per-segment NumPy loops; gradients; TF's empty-segment values."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients


def reference(data, ids, num, kind, empty):
    out = np.full((num,) + data.shape[ids.ndim:], empty, data.dtype)
    rows = data.reshape((-1,) + data.shape[ids.ndim:])
    for s in range(num):
        members = rows[ids.reshape(-1) == s]
        if len(members):
            out[s] = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[kind](
                members, axis=0
            )
    return out


@st.composite
def unsorted_cases(draw):
    num = draw(st.integers(0, 4))
    ids_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    count = int(np.prod(ids_shape))
    ids = np.asarray(draw(st.lists(st.integers(-1, num - 1), min_size=count, max_size=count)),
                     np.int32).reshape(ids_shape)
    tail = tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    values = draw(st.lists(st.integers(-4, 4), min_size=count * int(np.prod(tail)),
                           max_size=count * int(np.prod(tail))))
    return np.asarray(values, np.float64).reshape(ids_shape + tail), ids, num


@settings(max_examples=60)
@given(case=unsorted_cases())
def test_unsorted_segment_ops_match_a_loop(case):
    data, ids, num = case
    info = np.finfo(np.float64)
    for kind, fn, empty in [("sum", tf.math.unsorted_segment_sum, 0),
                            ("mean", tf.math.unsorted_segment_mean, 0),
                            ("max", tf.math.unsorted_segment_max, info.min),
                            ("min", tf.math.unsorted_segment_min, info.max)]:
        np.testing.assert_allclose(fn(data, ids, num).numpy(),
                                   reference(data, ids, num, kind, empty), rtol=1e-12)


@settings(max_examples=60)
@given(ids=st.lists(st.integers(0, 4), min_size=1, max_size=6).map(sorted), seed=st.integers(0, 99))
def test_sorted_segment_ops_match_a_loop_and_their_gradients(ids, seed):
    ids = np.asarray(ids, np.int32)
    data = np.random.default_rng(seed).standard_normal((len(ids), 2))  # no ties (max grad)
    num = int(ids[-1]) + 1
    for kind, fn in [("sum", tf.math.segment_sum), ("mean", tf.math.segment_mean),
                     ("max", tf.math.segment_max), ("min", tf.math.segment_min)]:
        np.testing.assert_allclose(fn(data, ids).numpy(), reference(data, ids, num, kind, 0),
                                   rtol=1e-12)
        check_gradients(lambda d, fn=fn: fn(d, ids), data)
    # unsorted: ids reversed; every segment non-empty (an empty max is the dtype's lowest)
    dense = np.unique(ids, return_inverse=True)[1].astype(np.int32)[::-1].copy()
    for fn in (tf.math.unsorted_segment_sum, tf.math.unsorted_segment_mean,
               tf.math.unsorted_segment_max, tf.math.unsorted_segment_min):
        check_gradients(lambda d, fn=fn: fn(d, dense, int(dense.max()) + 1), data)


def test_max_gradient_is_shared_among_ties_as_tf():
    data = tf.constant([2.0, 2.0, 1.0])
    with tf.GradientTape() as tape:
        tape.watch(data)
        out = tf.math.segment_max(data, [0, 0, 0])
    np.testing.assert_array_equal(tape.gradient(out, data).numpy(), [0.5, 0.5, 0.0])


def test_integer_means_as_tf():
    # sorted: the kernel divides in int32, truncating; unsorted: sum / count, a float64 division
    sorted_mean = tf.math.segment_mean(tf.constant([1, -2, -3]), [0, 1, 1])
    assert sorted_mean.dtype == tf.int32 and sorted_mean.numpy().tolist() == [1, -2]
    unsorted_mean = tf.math.unsorted_segment_mean(tf.constant([1, -2, -3]), [0, 1, 1], 3)
    assert unsorted_mean.dtype == tf.float64 and unsorted_mean.numpy().tolist() == [1, -2.5, 0]


def test_empty_segments_and_integer_data_as_tf():
    np.testing.assert_array_equal(tf.math.segment_mean([1.0, 2.0, 3.0], [0, 0, 2]), [1.5, 0, 3])
    np.testing.assert_array_equal(tf.math.segment_max([1.0, 2.0, 3.0], [0, 0, 2]), [2, 0, 3])
    out = tf.math.unsorted_segment_max(tf.constant([1, 2, 3]), [0, 0, 1], 3)
    assert out.dtype == tf.int32 and out.numpy().tolist() == [2, 3, -(2**31)]
    np.testing.assert_array_equal(tf.math.unsorted_segment_sum([1.0, 2.0, 3.0], [0, -1, 1], 3),
                                  [1, 3, 0])


@pytest.mark.parametrize(
    ("call", "phrase"),
    [
        (lambda: tf.math.segment_sum([1.0, 2.0, 3.0], [1, 0, 0]), "not increasing"),
        (lambda: tf.math.segment_sum([1.0, 2.0, 3.0], [0, 0]), "same size as dimension 0"),
        (lambda: tf.math.segment_sum([1.0, 2.0, 3.0], [-1, 0, 0]), "Segment id -1 out of range"),
        (lambda: tf.math.unsorted_segment_sum([1.0, 2.0, 3.0], [0, 5, 1], 3),
         r"segment_ids\[1\] = 5 is out of range \[0, 3\)"),
        (lambda: tf.math.unsorted_segment_sum(tf.ones([3, 2]), [0, 1], 3),
         "does not start with segment_ids.shape"),
    ],
)
def test_bad_ids_raise_invalid_argument(call, phrase):
    with pytest.raises(tf.errors.InvalidArgumentError, match=phrase):
        call()
