"""``tensor[...]`` and ``strided_slice``: TF's accepted index kinds, errors, and gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients

X = np.arange(24.0).reshape(2, 3, 4)


def index_entries(size):
    ints = st.integers(-size, size - 1)
    bounds = st.one_of(st.none(), st.integers(-size - 1, size + 1))
    steps = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return st.one_of(ints, st.builds(slice, bounds, bounds, steps))


@st.composite
def keys(draw):
    parts = [draw(index_entries(d)) for d in X.shape[: draw(st.integers(0, 3))]]
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), None)
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
    return tuple(parts)


@settings(max_examples=60)
@given(key=keys())
def test_getitem_matches_numpy_and_its_gradient_scatters(key):
    t = tf.constant(X)
    np.testing.assert_array_equal(t[key].numpy(), X[key])
    check_gradients(lambda v: v[key] * 2.0, X)


def test_scalar_integer_tensors_are_indices_too():
    t = tf.constant(X)
    i = tf.constant(1)
    np.testing.assert_array_equal(t[i].numpy(), X[1])
    np.testing.assert_array_equal(t[:, i : i + 2].numpy(), X[:, 1:3])
    np.testing.assert_array_equal(t[tf.constant(1, tf.int64)].numpy(), X[1])
    np.testing.assert_array_equal(t[np.int64(1), tf.newaxis].numpy(), X[1, None])


@pytest.mark.parametrize("bad", [[0, 1], 1.0, tf.constant([0, 1]), tf.constant(1.0), "a"])
def test_other_indices_raise_tfs_type_error(bad):
    with pytest.raises(TypeError, match=r"Only integers, slices \(`:`\), ellipsis \(`\.\.\.`\)"):
        tf.constant(X)[bad]


def test_out_of_range_and_too_many_indices():
    t = tf.constant([1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice index 3 of dimension 0"):
        t[3]
    with pytest.raises(tf.errors.InvalidArgumentError, match="slice index -4 of dimension 0"):
        t[-4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Index out of range"):
        t[0, 0]
    with pytest.raises(ValueError, match="Multiple ellipses"):
        t[..., ...]
    assert t[5:].numpy().tolist() == []  # slices clamp, as in TF


def test_getitem_on_variables_records_the_read():
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        y = v[1] * 3.0 + v[::2][1]
    assert tape.gradient(y, v).numpy().tolist() == [0.0, 3.0, 1.0]


def test_iteration_yields_rows_with_gradients():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = sum(tf.reduce_sum(row) * i for i, row in enumerate(x))
    assert tape.gradient(y, x).numpy().tolist() == [[0.0, 0.0], [1.0, 1.0]]


def test_strided_slice_with_masks():
    t = tf.constant(X)
    out = tf.strided_slice(t, [0, 1], [2, 3], [1, 1])
    np.testing.assert_array_equal(out.numpy(), X[0:2, 1:3])
    out = tf.strided_slice(t, [1, 0], [0, 2], [1, 1], begin_mask=0b10, shrink_axis_mask=0b01)
    np.testing.assert_array_equal(out.numpy(), X[1, :2])
    out = tf.strided_slice(t, [0, 0], [0, 1], [1, 1], ellipsis_mask=0b01)
    np.testing.assert_array_equal(out.numpy(), X[..., 0:1])
