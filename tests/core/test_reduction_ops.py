"""Reductions and argmax/argmin: values vs NumPy, gradients vs finite differences, TF's rules."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from tests.gradcheck import check_gradients

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)


@st.composite
def array_and_axis(draw, lo=-3.0, hi=3.0, unique=False):
    shape = draw(shapes)
    if unique:  # well-separated values: no (near) ties for max/min
        size = int(np.prod(shape))
        order = draw(st.permutations(list(range(size))))
        x = (np.array(order, np.float64) * 0.25 - 1.0).reshape(shape)
    else:
        x = draw(
            hnp.arrays(np.float64, shape, elements=st.floats(lo, hi, allow_nan=False, width=64))
        )
    ndim = len(shape)
    axis = draw(
        st.one_of(
            st.none(),
            st.integers(-ndim, ndim - 1),
            st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True),
        )
    )
    return x, axis, draw(st.booleans())


def _np_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


REDUCTIONS = {
    "reduce_sum": (tf.reduce_sum, np.sum, False),
    "reduce_mean": (tf.reduce_mean, np.mean, False),
    "reduce_max": (tf.reduce_max, np.max, True),
    "reduce_min": (tf.reduce_min, np.min, True),
    "reduce_prod": (tf.reduce_prod, np.prod, False),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@settings(max_examples=20)
@given(data=st.data())
def test_reduction_values_and_gradients(name, data):
    op, ref, unique = REDUCTIONS[name]
    x, axis, keepdims = data.draw(array_and_axis(unique=unique))

    def fn(t):
        return op(t, axis=axis, keepdims=keepdims)

    np.testing.assert_allclose(fn(x).numpy(), ref(x, axis=_np_axis(axis), keepdims=keepdims))
    check_gradients(fn, x)


@settings(max_examples=20)
@given(data=st.data())
def test_logsumexp_value_and_gradient(data):
    x, axis, keepdims = data.draw(array_and_axis())

    def fn(t):
        return tf.reduce_logsumexp(t, axis=axis, keepdims=keepdims)

    expected = np.log(np.sum(np.exp(x), axis=_np_axis(axis), keepdims=keepdims))
    np.testing.assert_allclose(fn(x).numpy(), expected, rtol=1e-12, atol=1e-12)
    check_gradients(fn, x)


def test_logsumexp_is_stable_for_large_inputs():
    out = tf.reduce_logsumexp(tf.constant([1000.0, 1000.0]))
    np.testing.assert_allclose(out.numpy(), 1000.0 + np.log(2.0), rtol=1e-6)


def test_reduce_max_splits_the_gradient_among_ties():
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_max(x, axis=1)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[0, 0.5, 0.5], [1 / 3] * 3])


def test_reduce_prod_gradient_with_zeros():
    check_gradients(lambda t: tf.reduce_prod(t, axis=0), np.array([[0.0, 2.0], [0.0, 3.0]]))
    check_gradients(lambda t: tf.reduce_prod(t), np.array([0.0, 2.0, 3.0]))


def test_integer_mean_truncates_toward_zero():
    assert tf.reduce_mean(tf.constant([1, 2])).numpy() == 1
    assert tf.reduce_mean(tf.constant([-1, -2])).numpy() == -1
    assert tf.reduce_mean(tf.constant([1, 2])).dtype == tf.int32


def test_axis_forms():
    x = tf.reshape(tf.range(24.0), [2, 3, 4])
    ref = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tf.reduce_sum(x, axis=-1).numpy(), ref.sum(-1))
    np.testing.assert_array_equal(tf.reduce_sum(x, axis=[0, 2]).numpy(), ref.sum((0, 2)))
    np.testing.assert_array_equal(tf.reduce_sum(x, axis=tf.constant(1)).numpy(), ref.sum(1))
    np.testing.assert_array_equal(tf.reduce_sum(x, axis=[]).numpy(), ref)
    assert tf.reduce_sum(x, axis=1, keepdims=True).shape == (2, 1, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension 3"):
        tf.reduce_sum(x, axis=3)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.reduce_sum(tf.constant(1.0), axis=0)


def test_reduce_any_all_need_bool():
    b = tf.constant([[True, False], [True, True]])
    assert tf.reduce_any(b, axis=0).numpy().tolist() == [True, True]
    assert tf.reduce_all(b, axis=1).numpy().tolist() == [False, True]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.reduce_all(tf.constant([1, 0]))


def test_empty_max_is_minus_infinity():
    assert np.isneginf(tf.reduce_max(tf.zeros([0])).numpy())
    assert tf.reduce_min(tf.zeros([0], tf.int32)).numpy() == np.iinfo(np.int32).max


@given(
    x=hnp.arrays(np.float32, (3, 4), elements=st.sampled_from([0.0, 1.0, 2.0])),
    axis=st.sampled_from([0, 1, -1]),
)
def test_argmax_argmin_pick_the_first_extreme(x, axis):
    out = tf.argmax(x, axis=axis)
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(out.numpy(), np.argmax(x, axis=axis))
    np.testing.assert_array_equal(tf.argmin(x, axis=axis).numpy(), np.argmin(x, axis=axis))
    assert tf.argmax(x, axis=axis, output_type=tf.int32).dtype == tf.int32


def test_argmax_default_axis_is_zero():
    assert tf.argmax(tf.constant([[1, 5], [3, 2]])).numpy().tolist() == [1, 0]


def test_reduce_mean_gradient_scales_by_count():
    v = tf.Variable(tf.ones([2, 3]))
    with tf.GradientTape() as tape:
        y = tf.reduce_mean(v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), np.full((2, 3), 1 / 6))
