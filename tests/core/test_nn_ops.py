"""Activations, softmax, bias_add, l2_loss, moments, dropout: values, gradients, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
import simdist.nn as nn
import simdist.random as tfr
from simdist import errors
from tests.gradcheck import check_gradients

small_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


def arrays(shape, lo=-3.0, hi=3.0, away_from=None):
    """Float64 arrays; ``away_from`` keeps values 0.05 clear of kinks (finite differences)."""
    elems = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if away_from is not None:
        elems = elems.filter(lambda v: all(abs(v - k) > 0.05 for k in away_from))
    return hnp.arrays(np.float64, shape, elements=elems)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0), (0.0,)),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6), (0.0, 6.0)),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), (0.0,)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1), (0.0,)),
    "selu": (
        nn.selu,
        lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1)),
        (0.0,),
    ),
    "sigmoid": (nn.sigmoid, _sigmoid, ()),
    "tanh": (nn.tanh, np.tanh, ()),
    "softplus": (nn.softplus, lambda x: np.log1p(np.exp(x)), ()),
    "softsign": (nn.softsign, lambda x: x / (1 + np.abs(x)), (0.0,)),
    "silu": (nn.silu, lambda x: x * _sigmoid(x), ()),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@settings(max_examples=15)
@given(data=st.data())
def test_activation_values_and_gradients(name, data):
    fn, formula, kinks = ACTIVATIONS[name]
    x = data.draw(small_shapes.flatmap(lambda s: arrays(s, -8.0, 8.0, away_from=kinks)))
    np.testing.assert_allclose(fn(tf.constant(x)).numpy(), formula(x), rtol=1e-12, atol=1e-12)
    check_gradients(fn, x)


def test_gradients_at_kinks_follow_tf():
    x = tf.constant([0.0, 6.0, -1.0, 2.0])
    expected = {
        nn.relu: [0.0, 1.0, 0.0, 1.0],
        nn.relu6: [0.0, 0.0, 0.0, 1.0],
        nn.leaky_relu: [0.2, 1.0, 0.2, 1.0],
        nn.elu: [1.0, 1.0, float(np.exp(-1.0)), 1.0],
    }
    for fn, grad in expected.items():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), grad, rtol=1e-6)


def test_float32_stays_float32_and_extremes_are_finite():
    x = tf.constant([-1e4, 0.0, 1e4])
    for fn in (nn.sigmoid, nn.softplus, nn.tanh, nn.elu, nn.silu):
        y = fn(x)
        assert y.dtype == tf.float32
        assert np.all(np.isfinite(y.numpy()))
    np.testing.assert_array_equal(nn.sigmoid(x).numpy(), [0.0, 0.5, 1.0])


def test_relu_accepts_integers_but_float_ops_refuse_them():
    np.testing.assert_array_equal(nn.relu([-1, 2]).numpy(), [0, 2])
    for fn in (nn.softmax, nn.log_softmax, nn.sigmoid, nn.l2_loss):
        with pytest.raises(errors.InvalidArgumentError, match="int32 is not in the list"):
            fn(tf.constant([1, 2]))


@settings(max_examples=20)
@given(x=small_shapes.flatmap(lambda s: arrays(s, -20.0, 20.0)), data=st.data())
def test_softmax_and_log_softmax_match_the_formula(x, data):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    expected = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(nn.softmax(x, axis=axis).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(
        nn.log_softmax(x, axis=axis).numpy(), np.log(expected), rtol=1e-9, atol=1e-12
    )
    check_gradients(lambda t: nn.softmax(t, axis=axis), x)
    check_gradients(lambda t: nn.log_softmax(t, axis=axis), x)


def test_softmax_extreme_logits_stay_finite():
    np.testing.assert_array_equal(nn.softmax([1e4, 0.0]).numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(nn.log_softmax([1e4, 0.0]).numpy(), [0.0, -1e4])
    with pytest.raises(errors.InvalidArgumentError, match="axis 2 is out of range"):
        nn.softmax([[1.0]], axis=2)


def test_bias_add_values_gradients_and_tf_errors():
    x = np.arange(24.0).reshape(2, 3, 4)
    b = np.array([1.0, -2.0, 3.0, 0.5])
    np.testing.assert_array_equal(nn.bias_add(x, b).numpy(), x + b)
    check_gradients(nn.bias_add, x, b)
    nchw = np.arange(24.0).reshape(2, 3, 2, 2)
    got = nn.bias_add(nchw, b[:3], data_format="NCHW").numpy()
    np.testing.assert_array_equal(got, nchw + b[:3].reshape(1, 3, 1, 1))
    check_gradients(lambda v, c: nn.bias_add(v, c, data_format="NCHW"), nchw, b[:3])
    msg = r"as many biases as the last dimension of the input tensor: \[4\] vs. \[2,3\]"
    with pytest.raises(errors.InvalidArgumentError, match=msg):
        nn.bias_add(np.zeros((2, 3)), np.zeros(4))
    with pytest.raises(errors.InvalidArgumentError, match=r"Biases must be 1D: \[1,3\]"):
        nn.bias_add(np.zeros((2, 3)), np.zeros((1, 3)))
    with pytest.raises(errors.InvalidArgumentError, match=r"Input tensor must be at least 2D"):
        nn.bias_add(np.zeros(3), np.zeros(3))
    with pytest.raises(errors.InvalidArgumentError, match="but is a double tensor"):
        nn.bias_add(tf.constant([[1.0]]), tf.constant([0.0], dtype="float64"))


def test_l2_loss_and_moments():
    x = np.array([[1.0, 2.0], [3.0, -4.0]])
    assert float(nn.l2_loss(x)) == 15.0
    check_gradients(nn.l2_loss, x)
    mean, var = nn.moments(x, axes=[0])
    np.testing.assert_allclose(mean.numpy(), x.mean(0))
    np.testing.assert_allclose(var.numpy(), x.var(0))
    m2, v2 = nn.moments(x, axes=[0, 1], keepdims=True)
    assert m2.shape == tf.TensorShape([1, 1]) and float(v2.numpy().item()) == x.var()
    check_gradients(lambda t: nn.moments(t, axes=[1])[0], x)
    check_gradients(lambda t: nn.moments(t, axes=[1])[1], x)


def test_dropout_keeps_the_expectation_and_the_rate():
    tfr.set_seed(0)
    rate = 0.3
    y = nn.dropout(tf.constant(np.ones(100_000, np.float32)), rate).numpy()
    assert y.dtype == np.float32
    kept = y != 0
    assert abs(kept.mean() - (1 - rate)) < 0.01
    np.testing.assert_allclose(y[kept], 1 / (1 - rate), rtol=1e-6)
    assert abs(y.mean() - 1.0) < 0.02


def test_dropout_is_seeded_and_its_gradient_is_the_mask():
    x = tf.constant(np.full((4, 50), 2.0))
    tfr.set_seed(4)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = nn.dropout(x, 0.5, seed=1)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(g, y.numpy() / 2.0)
    tfr.set_seed(4)
    np.testing.assert_array_equal(nn.dropout(x, 0.5, seed=1).numpy(), y.numpy())
    assert not np.array_equal(nn.dropout(x, 0.5, seed=1).numpy(), y.numpy())


def test_dropout_noise_shape_drops_whole_columns():
    y = nn.dropout(tf.constant(np.ones((20, 30))), 0.5, noise_shape=[1, 30], seed=3).numpy()
    assert np.all(y == y[0])
    with pytest.raises(errors.InvalidArgumentError, match="broadcastable"):
        nn.dropout(tf.constant(np.ones((2, 3))), 0.5, noise_shape=[2, 2])


def test_dropout_argument_errors():
    x = tf.constant([1.0, 2.0])
    assert nn.dropout(x, 0.0) is x
    for bad in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"`rate` must be a scalar tensor or a float in"):
            nn.dropout(x, bad)
    with pytest.raises(ValueError, match="must be a floating point tensor"):
        nn.dropout(tf.constant([1, 2]), 0.5)
    assert nn.dropout(x, tf.constant(0.5), seed=1).shape == x.shape
