"""Fused conv2d/matmul + bias + relu: equal to the unfused ops, gradients, joint vjps, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
import simdist.nn as nn
from simdist import errors
from simdist.core.ops import fused_ops
from tests.gradcheck import check_gradients


@st.composite
def conv_case(draw, max_side=6):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    stride = draw(st.integers(1, 2))
    dilation = 1 if stride > 1 else draw(st.integers(1, 2))
    eff_h, eff_w = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    height = draw(st.integers(eff_h, max(eff_h, max_side)))
    width = draw(st.integers(eff_w, max(eff_w, max_side)))
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, height, width, c))
    w = rng.standard_normal((kh, kw, c, o))
    b = rng.standard_normal(o)
    return x, w, b, stride, padding, dilation


def unfused_conv(x, w, b, stride, padding, dilation, activation):
    y = nn.conv2d(x, w, stride, padding, dilations=dilation)
    if b is not None:
        y = nn.bias_add(y, b)
    return nn.relu(y) if activation == "relu" else y


def fused_conv(x, w, b, stride, padding, dilation, activation):
    return fused_ops.conv2d_bias_activation(
        x, w, b, strides=stride, padding=padding, dilations=dilation, activation=activation
    )


@pytest.mark.parametrize("activation", [None, "relu"])
@pytest.mark.parametrize("with_bias", [True, False])
@settings(max_examples=25)
@given(case=conv_case())
def test_conv_equals_conv2d_bias_add_relu_values_and_tape_gradients(activation, with_bias, case):
    x, w, b, stride, padding, dilation = case
    b = b if with_bias else None
    args = (stride, padding, dilation, activation)
    grads = []
    for fn in (unfused_conv, fused_conv):
        tensors = [tf.constant(v) for v in (x, w, b) if v is not None]
        with tf.GradientTape() as tape:
            tape.watch(tensors)
            y = fn(*tensors, *([None] if b is None else []), *args)
        g = np.random.default_rng(1).standard_normal(y.shape)
        grads.append((y.numpy(), tape.gradient(y, tensors, output_gradients=tf.constant(g))))
    (y0, g0), (y1, g1) = grads
    np.testing.assert_allclose(y1, y0, rtol=1e-10, atol=1e-12)
    for a, e in zip(g1, g0, strict=True):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)


@settings(max_examples=12)
@given(case=conv_case(max_side=5))
def test_conv_gradients_match_finite_differences(case):
    x, w, b, stride, padding, dilation = case
    check_gradients(
        lambda xt, wt, bt: fused_conv(xt, wt, bt, stride, padding, dilation, "relu"), x, w, b
    )


def test_conv_relu_gets_no_gradient_at_zero_like_tf_relu():
    x = np.zeros((1, 2, 2, 1))
    w = np.ones((1, 1, 1, 1))
    b = np.array([0.0])
    xt, wt, bt = tf.constant(x), tf.constant(w), tf.constant(b)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt, bt])
        y = fused_ops.conv2d_bias_activation(xt, wt, bt, activation="relu")
    dx, dw, db = tape.gradient(y, [xt, wt, bt])
    np.testing.assert_array_equal(dx.numpy(), np.zeros_like(x))
    assert float(dw.numpy().sum()) == 0.0 and float(db.numpy()[0]) == 0.0


def test_joint_vjp_computes_only_the_wanted_gradients():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((2, 5, 5, 2)))
    w = tf.Variable(rng.standard_normal((3, 3, 2, 4)))
    b = tf.Variable(rng.standard_normal(4))
    for sources in ([b], [w], [x], [x, b], [w, b]):
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(sources)
            y = fused_ops.conv2d_bias_activation(x, w, b, activation="relu")
            loss = tf.reduce_sum(y * y)
        got = tape.gradient(loss, sources)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(sources)
            y = unfused_conv(x, w, b, 1, "VALID", 1, "relu")
            loss = tf.reduce_sum(y * y)
        expected = tape.gradient(loss, sources)
        for a, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-10)


def test_persistent_tape_and_an_output_used_twice():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((1, 4, 4, 1)))
    w = tf.Variable(rng.standard_normal((2, 2, 1, 3)))
    b = tf.Variable(rng.standard_normal(3))
    with tf.GradientTape(persistent=True) as tape:
        y = fused_ops.conv2d_bias_activation(x, w, b, activation="relu")
        loss = tf.reduce_sum(y * y) + tf.reduce_sum(y)
    first = tape.gradient(loss, [w, b])
    second = tape.gradient(loss, [w, b])
    yv = y.numpy()
    with tf.GradientTape() as tape:
        y2 = unfused_conv(x, w, b, 1, "VALID", 1, "relu")
        loss2 = tf.reduce_sum(y2 * y2) + tf.reduce_sum(y2)
    expected = tape.gradient(loss2, [w, b])
    np.testing.assert_allclose(yv, y2.numpy(), rtol=1e-12)
    for a, a2, e in zip(first, second, expected, strict=True):
        np.testing.assert_array_equal(a.numpy(), a2.numpy())
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-10)


@pytest.mark.parametrize("activation", [None, "relu"])
@pytest.mark.parametrize("with_bias", [True, False])
@settings(max_examples=15)
@given(
    shape=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4)),
    seed=st.integers(0, 2**16),
)
def test_dense_equals_matmul_bias_add_relu_and_gradients(activation, with_bias, shape, seed):
    rng = np.random.default_rng(seed)
    batch, n_in, units = shape
    x, k = rng.standard_normal((batch, n_in)), rng.standard_normal((n_in, units))
    b = rng.standard_normal(units) if with_bias else None

    def unfused(xt, kt, bt=None):
        y = tf.matmul(xt, kt)
        y = y if bt is None else nn.bias_add(y, bt)
        return nn.relu(y) if activation == "relu" else y

    def fused(xt, kt, bt=None):
        return fused_ops.dense_bias_activation(xt, kt, bt, activation=activation)

    arrays = [a for a in (x, k, b) if a is not None]
    np.testing.assert_allclose(
        fused(*map(tf.constant, arrays)).numpy(),
        unfused(*map(tf.constant, arrays)).numpy(),
        rtol=1e-12,
        atol=1e-12,
    )
    check_gradients(fused, *arrays)


def test_float32_stays_float32():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 6, 1)).astype(np.float32)
    w = tf.Variable(rng.standard_normal((3, 3, 1, 4)).astype(np.float32))
    b = tf.Variable(np.zeros(4, np.float32))
    k = tf.Variable(rng.standard_normal((64, 3)).astype(np.float32))
    with tf.GradientTape() as tape:
        y = fused_ops.conv2d_bias_activation(x, w, b, activation="relu")
        z = fused_ops.dense_bias_activation(tf.reshape(y, [2, -1]), k, None, "relu")
    assert y.dtype == z.dtype == tf.float32
    for g in tape.gradient(z, [w, b, k]):
        assert g.dtype == tf.float32


def test_errors():
    x, w = np.zeros((1, 4, 4, 2)), np.zeros((3, 3, 2, 3))
    with pytest.raises(ValueError, match="activation None or 'relu'"):
        fused_ops.conv2d_bias_activation(x, w, activation="tanh")
    with pytest.raises(errors.InvalidArgumentError, match="one value per output channel"):
        fused_ops.conv2d_bias_activation(x, w, np.zeros(2))
    with pytest.raises(errors.InvalidArgumentError, match="in_channels"):
        fused_ops.conv2d_bias_activation(x, np.zeros((3, 3, 1, 3)))
    with pytest.raises(errors.InvalidArgumentError, match="expected to be a double"):
        fused_ops.conv2d_bias_activation(tf.constant(x), tf.constant(w, dtype=tf.float32))
    with pytest.raises(errors.InvalidArgumentError, match=r"\[batch, in\]"):
        fused_ops.dense_bias_activation(np.zeros((2, 3)), np.zeros((4, 5)))
    with pytest.raises(errors.InvalidArgumentError, match="one value per output channel"):
        fused_ops.dense_bias_activation(np.zeros((2, 3)), np.zeros((3, 5)), np.zeros((1, 5)))


def test_keras_layers_run_fused_and_unfused_activations_alike():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((2, 6, 6, 3)).astype(np.float32))
    for activation in ("relu", "tanh", None, tf.nn.relu):
        conv = tf.keras.layers.Conv2D(4, 3, activation=activation)
        dense = tf.keras.layers.Dense(5, activation=activation)
        with tf.GradientTape() as tape:
            y = conv(x)
            z = dense(tf.reshape(y, [2, -1]))
        grads = tape.gradient(z, conv.trainable_variables + dense.trainable_variables)
        act = tf.keras.activations.get(activation)
        y_ref = act(nn.bias_add(nn.conv2d(x, conv.kernel, 1, "VALID"), conv.bias))
        z_ref = act(nn.bias_add(tf.matmul(tf.reshape(y_ref, [2, -1]), dense.kernel), dense.bias))
        np.testing.assert_allclose(y.numpy(), y_ref.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(z.numpy(), z_ref.numpy(), rtol=1e-5, atol=1e-6)
        assert all(g is not None for g in grads)
    dense3 = tf.keras.layers.Dense(2, activation="relu")  # rank 3: the unfused matmul path
    assert dense3(tf.ones([2, 3, 4])).shape == [2, 3, 2]
