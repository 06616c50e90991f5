"""Dense, Conv2D, pooling, Flatten, Dropout, Activation, ReLU against NumPy formulas."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import keras
from simdist.core import random as core_random
from simdist.core.ops import reduction_ops
from simdist.keras import backend, layers
from tests.gradcheck import check_gradients


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()


def _conv_reference(x, k, stride=1, padding="valid"):
    """Cross-correlation, NHWC x HWIO, by explicit loops over the kernel window."""
    kh, kw = k.shape[:2]
    if padding == "same":
        ph, pw = kh - 1, kw - 1
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    n, h, w, _ = x.shape
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, oh, ow, k.shape[3]))
    for i in range(kh):
        for j in range(kw):
            window = x[:, i : i + stride * oh : stride, j : j + stride * ow : stride, :]
            out += np.einsum("nhwc,cf->nhwf", window, k[i, j])
    return out


def test_dense_matches_numpy_and_applies_activation():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    layer = layers.Dense(4, activation="relu", bias_initializer="ones")
    out = layer(x).numpy()
    kernel, bias = layer.get_weights()
    np.testing.assert_allclose(out, np.maximum(x @ kernel + bias, 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(bias, np.ones(4))


def test_dense_on_rank_3_applies_on_last_axis():
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    layer = layers.Dense(5, use_bias=False)
    out = layer(x)
    assert out.shape == (2, 3, 5) and len(layer.weights) == 1
    np.testing.assert_allclose(out.numpy(), x @ layer.get_weights()[0], rtol=1e-5, atol=1e-6)


def test_dense_refuses_wrong_last_dimension_and_rank_1():
    layer = layers.Dense(2)
    layer(np.ones((1, 4), np.float32))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        layer(np.ones((1, 5), np.float32))
    with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
        layers.Dense(2)(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="positive integer"):
        layers.Dense(0)


def test_dense_gradients_match_finite_differences():
    layer = layers.Dense(3, activation="tanh", dtype="float64")
    x = np.random.default_rng(2).standard_normal((2, 4))
    layer(x)
    check_gradients(lambda t: layer(t), x)


@pytest.mark.parametrize("padding,stride", [("valid", 1), ("same", 1), ("valid", 2)])
def test_conv2d_matches_numpy(padding, stride):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    layer = layers.Conv2D(4, 3, strides=stride, padding=padding, bias_initializer="ones")
    out = layer(x).numpy()
    kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 3, 3, 4)
    want = _conv_reference(x.astype(np.float64), kernel.astype(np.float64), stride, padding)
    np.testing.assert_allclose(out, want + bias, rtol=1e-5, atol=1e-5)
    assert tuple(layer.compute_output_shape((None, 7, 6, 3))) == (None, *out.shape[1:])


def test_conv2d_checks_channels_and_arguments():
    layer = layers.Conv2D(2, (2, 2))
    layer(np.ones((1, 4, 4, 3), np.float32))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
        layer(np.ones((1, 4, 4, 2), np.float32))
    with pytest.raises(ValueError, match="padding"):
        layers.Conv2D(2, 3, padding="full")
    with pytest.raises(ValueError, match="kernel_size"):
        layers.Conv2D(2, (3, 3, 3))


def test_max_and_average_pooling_match_numpy():
    x = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
    x = np.random.default_rng(4).permutation(x.ravel()).reshape(x.shape)
    blocks = x.reshape(2, 2, 2, 3, 2, 3)
    np.testing.assert_array_equal(layers.MaxPooling2D()(x).numpy(), blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(
        layers.AveragePooling2D()(x).numpy(), blocks.mean(axis=(2, 4)), rtol=1e-6
    )
    pool = layers.MaxPooling2D(pool_size=3, strides=1, padding="same")
    assert pool(x).shape == x.shape
    assert tuple(layers.MaxPooling2D().compute_output_shape((None, 5, 5, 2))) == (None, 2, 2, 2)


def test_flatten_shapes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = layers.Flatten()(x)
    np.testing.assert_array_equal(out.numpy(), x.reshape(2, 12))
    assert layers.Flatten()(np.ones(3, np.float32)).shape == (3, 1)
    assert tuple(layers.Flatten().compute_output_shape((None, 5, 5, 64))) == (None, 1600)


def test_dropout_inference_is_identity_and_training_scales():
    x = np.ones((50, 40), np.float32)
    drop = layers.Dropout(0.25, seed=3)
    np.testing.assert_array_equal(drop(x).numpy(), x)
    np.testing.assert_array_equal(drop(x, training=False).numpy(), x)
    out = drop(x, training=True).numpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.15 < (out == 0).mean() < 0.35
    with pytest.raises(ValueError, match="between 0 and 1"):
        layers.Dropout(1.5)


def test_dropout_with_seed_is_reproducible_after_set_seed():
    x = np.ones((10, 10), np.float32)
    core_random.set_seed(7)
    first = layers.Dropout(0.5, seed=1)(x, training=True).numpy()
    core_random.set_seed(7)
    second = layers.Dropout(0.5, seed=1)(x, training=True).numpy()
    np.testing.assert_array_equal(first, second)


def test_activation_and_relu_layers():
    x = np.array([[-2.0, -0.5, 0.5, 3.0]], np.float32)
    np.testing.assert_allclose(
        layers.Activation("sigmoid")(x).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-6
    )
    np.testing.assert_array_equal(layers.ReLU()(x).numpy(), np.maximum(x, 0))
    capped = layers.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.0)(x).numpy()
    np.testing.assert_allclose(capped, [[-0.2, -0.05, 0.5, 1.0]], rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown activation"):
        layers.Activation("nope")


def test_keras_activations_module():
    x = tf.constant([[1.0, 2.0, 3.0]])
    s = keras.activations.softmax(x).numpy()
    np.testing.assert_allclose(s[0], np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(), rtol=1e-6)
    with pytest.raises(ValueError, match="1D"):
        keras.activations.softmax(tf.constant([1.0, 2.0]))
    assert keras.activations.get(None) is keras.activations.linear
    assert keras.activations.serialize(keras.activations.get("relu")) == "relu"


@given(
    batch=st.integers(1, 3),
    size=st.integers(4, 8),
    kernel=st.integers(1, 3),
    stride=st.integers(1, 2),
    padding=st.sampled_from(["valid", "same"]),
)
def test_conv_and_pool_output_shapes_agree_with_compute_output_shape(
    batch, size, kernel, stride, padding
):
    x = np.zeros((batch, size, size + 1, 2), np.float32)
    conv = layers.Conv2D(3, kernel, strides=stride, padding=padding)
    pool = layers.MaxPooling2D(kernel, strides=stride, padding=padding)
    for layer in (conv, pool):
        out = layer(x)
        assert tuple(layer.compute_output_shape(x.shape)) == tuple(out.shape)


def test_conv2d_gradient_reaches_kernel_and_bias():
    layer = layers.Conv2D(2, 2, activation="relu")
    x = tf.constant(np.random.default_rng(5).standard_normal((1, 4, 4, 1)).astype(np.float32))
    with tf.GradientTape() as tape:
        loss = reduction_ops.reduce_sum(layer(x))
    gk, gb = tape.gradient(loss, layer.trainable_variables)
    assert gk.shape == (2, 2, 1, 2) and gb.shape == (2,)
