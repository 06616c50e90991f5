"""searchsorted and unique against NumPy; histogram ops against their definitions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf

ints = st.integers(-5, 5)


@settings(max_examples=60)
@given(
    seq=st.lists(ints, min_size=1, max_size=8).map(sorted),
    vals=st.lists(ints, max_size=6),
    side=st.sampled_from(["left", "right"]),
)
def test_searchsorted_matches_numpy(seq, vals, side):
    got = tf.searchsorted(seq, tf.constant(vals, tf.int32), side=side).numpy()
    np.testing.assert_array_equal(got, np.searchsorted(seq, vals, side=side))


@settings(max_examples=60)
@given(x=st.lists(ints, max_size=10))
def test_unique_keeps_first_appearance_order(x):
    y, idx, count = tf.unique_with_counts(tf.constant(x, tf.int32))
    firsts = list(dict.fromkeys(x))
    assert y.numpy().tolist() == firsts
    assert [firsts[i] for i in idx.numpy()] == x
    assert count.numpy().tolist() == [x.count(v) for v in firsts]


@settings(max_examples=60)
@given(
    x=hnp.arrays(
        np.int32, hnp.array_shapes(max_dims=2, min_side=0, max_side=5), elements=st.integers(0, 6)
    ),
    minlength=st.none() | st.integers(0, 9),
    maxlength=st.none() | st.integers(0, 9),
)
def test_bincount_matches_numpy(x, minlength, maxlength):
    want = np.bincount(x.reshape(-1), minlength=minlength or 0)
    if maxlength is not None:
        want = want[:maxlength]
    got = tf.math.bincount(x, minlength=minlength, maxlength=maxlength).numpy()
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60)
@given(values=st.lists(st.floats(-3, 8), max_size=12), nbins=st.integers(1, 6))
def test_histogram_counts_every_value_once(values, nbins):
    got = tf.histogram_fixed_width(tf.constant(values, tf.float64), [0.0, 5.0], nbins=nbins)
    assert got.numpy().sum() == len(values)
    inside = [v for v in values if 0 <= v < 5]
    interior = np.histogram(inside, bins=nbins, range=(0, 5))[0]
    clipped = got.numpy().copy()
    clipped[0] -= sum(v < 0 for v in values)
    clipped[-1] -= sum(v >= 5 for v in values)
    np.testing.assert_array_equal(clipped, interior)


def test_confusion_matrix_counts_pairs():
    got = tf.math.confusion_matrix([0, 1, 1, 2], [0, 2, 2, 1], num_classes=4).numpy()
    want = np.zeros((4, 4), np.int32)
    for lab, pred in [(0, 0), (1, 2), (1, 2), (2, 1)]:
        want[lab, pred] += 1
    np.testing.assert_array_equal(got, want)
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        tf.math.confusion_matrix([-1], [0])


def test_nan_values_as_tf_compares_them():
    nan = float("nan")
    y, idx = tf.unique([nan, 1.0, nan, 0.0, -0.0])
    assert idx.numpy().tolist() == [0, 1, 2, 3, 3] and y.shape == (4,)
    assert tf.searchsorted([1.0, 2.0], [nan]).numpy().tolist() == [0]
    assert tf.searchsorted([1.0, 2.0], [nan], side="right").numpy().tolist() == [2]
