"""boolean_mask, repeat, roll against NumPy; gradients by finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from tests.gradcheck import check_gradients

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


@settings(max_examples=60)
@given(x=hnp.arrays(np.int32, shapes, elements=st.integers(-9, 9)), data=st.data())
def test_boolean_mask_matches_numpy(x, data):
    axis = data.draw(st.integers(0, x.ndim - 1))
    k = data.draw(st.integers(1, x.ndim - axis))
    mask = data.draw(hnp.arrays(np.bool_, x.shape[axis : axis + k]))
    flat = x.reshape(x.shape[:axis] + (mask.size,) + x.shape[axis + k :])
    moved = np.moveaxis(flat, axis, 0)
    expected = np.moveaxis(moved[mask.reshape(-1)], 0, axis)
    np.testing.assert_array_equal(tf.boolean_mask(x, mask, axis=axis).numpy(), expected)


@settings(max_examples=60)
@given(x=hnp.arrays(np.int32, shapes, elements=st.integers(-9, 9)), data=st.data())
def test_repeat_and_roll_match_numpy(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    counts = data.draw(st.lists(st.integers(0, 3), min_size=x.shape[axis], max_size=x.shape[axis]))
    np.testing.assert_array_equal(
        tf.repeat(x, counts, axis=axis).numpy(), np.repeat(x, counts, axis=axis)
    )
    np.testing.assert_array_equal(tf.repeat(x, 2).numpy(), np.repeat(x, 2))
    shift = data.draw(st.integers(-6, 6))
    np.testing.assert_array_equal(tf.roll(x, shift, axis).numpy(), np.roll(x, shift, axis))


def test_gradients():
    x = np.random.default_rng(0).standard_normal((3, 4))
    check_gradients(lambda t: tf.boolean_mask(t, [[1, 0, 1, 1], [0, 0, 1, 0], [1] * 4]), x)
    check_gradients(lambda t: tf.boolean_mask(t, [True, False, True, True], axis=1), x)
    check_gradients(lambda t: tf.repeat(t, [0, 2, 1], axis=0), x)
    check_gradients(lambda t: tf.repeat(t, 2), x)
    check_gradients(lambda t: tf.roll(t, [1, 3, 1], [0, 1, 1]), x)
    check_gradients(lambda a, b: tf.identity_n([a, b])[0] * tf.identity_n([a, b])[1], x, x + 1)


def test_errors():
    with pytest.raises(ValueError, match="scalar"):
        tf.boolean_mask([1, 2], True)
    with pytest.raises(ValueError, match="incompatible"):
        tf.boolean_mask([1, 2], [True])
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        tf.roll([1, 2], [1, 2], [0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="minimum 1"):
        tf.shape_n([])
