"""depthwise_conv2d and separable_conv2d against conv2d per channel; gradients; dtypes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist import errors
from simdist.core.ops.depthwise_ops import depthwise_conv2d, separable_conv2d
from tests.core.test_conv_ops import reference_conv2d
from tests.gradcheck import check_gradients


def reference_depthwise(x, w, stride, padding, dilation):
    """The oracle: channel ``c`` convolved alone with ``w[:, :, c]``, outputs ``c * m + k``."""
    outs = [
        reference_conv2d(x[..., c : c + 1], w[:, :, c : c + 1, :], stride, padding, dilation)
        for c in range(x.shape[3])
    ]
    return np.concatenate(outs, axis=-1)


@st.composite
def depthwise_case(draw, max_side=7):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (1, 1) if max(stride) > 1 else (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    height = draw(st.integers((kh - 1) * dilation[0] + 1, max_side))
    width = draw(st.integers((kw - 1) * dilation[1] + 1, max_side))
    n, c, m = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return (
        rng.standard_normal((n, height, width, c)),
        rng.standard_normal((kh, kw, c, m)),
        stride,
        padding,
        dilation,
    )


@settings(max_examples=40)
@given(depthwise_case())
def test_forward_matches_conv2d_per_channel(case):
    x, w, stride, padding, dilation = case
    got = depthwise_conv2d(x, w, stride, padding, dilations=dilation).numpy()
    expected = reference_depthwise(x, w, stride, padding, dilation)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@settings(max_examples=15)
@given(depthwise_case(max_side=5))
def test_gradients_match_finite_differences(case):
    x, w, stride, padding, dilation = case
    check_gradients(lambda a, b: depthwise_conv2d(a, b, stride, padding, dilations=dilation), x, w)


def test_separable_is_depthwise_then_pointwise():
    rng = np.random.default_rng(0)
    x, dw = rng.standard_normal((2, 5, 5, 2)), rng.standard_normal((3, 3, 2, 2))
    pw = rng.standard_normal((1, 1, 4, 3))
    got = separable_conv2d(x, dw, pw, 2, "SAME").numpy()
    depth = reference_depthwise(x, dw, (2, 2), "SAME", (1, 1))
    np.testing.assert_allclose(got, depth @ pw[0, 0], rtol=1e-10)
    check_gradients(lambda a, b, c: separable_conv2d(a, b, c, 1, "VALID"), x[:1, :4], dw, pw)


def test_float32_stays_float32_in_forward_and_gradients():
    x = tf.constant(np.ones((2, 4, 4, 3), np.float32))
    w = tf.Variable(np.ones((2, 2, 3, 2), np.float32))
    with tf.GradientTape() as tape:
        y = depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME")
    assert y.dtype == tf.float32 and y.shape == (2, 4, 4, 6)
    gx, gw = tape.gradient(y, [x, w])
    assert np.asarray(gx).dtype == np.float32 and np.asarray(gw).dtype == np.float32


def test_channel_mismatch_is_refused():
    with pytest.raises(errors.InvalidArgumentError, match="same channels"):
        depthwise_conv2d(np.ones((1, 4, 4, 3)), np.ones((2, 2, 2, 1)), 1, "VALID")
