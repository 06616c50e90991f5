"""conv2d_transpose against a scatter-loop oracle and as the adjoint of conv2d; gradients."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist import errors
from simdist.core.ops.conv_transpose_ops import conv2d_transpose
from tests.core.test_conv_ops import reference_conv2d
from tests.gradcheck import check_gradients


def _pads(size, k, s, d, padding):
    eff = (k - 1) * d + 1
    if padding == "SAME":
        total = max((math.ceil(size / s) - 1) * s + eff - size, 0)
        return total // 2, eff
    return 0, eff


def reference_conv2d_transpose(x, w, out_hw, stride, padding, dilation=(1, 1)):
    """The oracle: each input pixel scatters ``x * w`` into its window of the padded output
    (the definition of the transpose of a convolution from ``out_hw`` to ``x``'s size)."""
    n, height, width, c = x.shape
    kh, kw, o, _ = w.shape
    top, eff_h = _pads(out_hw[0], kh, stride[0], dilation[0], padding)
    left, eff_w = _pads(out_hw[1], kw, stride[1], dilation[1], padding)
    rows = max(out_hw[0] + top, (height - 1) * stride[0] + eff_h)
    cols = max(out_hw[1] + left, (width - 1) * stride[1] + eff_w)
    yp = np.zeros((n, rows, cols, o))
    for b in range(n):
        for r in range(height):
            for q in range(width):
                for i in range(kh):
                    for j in range(kw):
                        row, col = r * stride[0] + i * dilation[0], q * stride[1] + j * dilation[1]
                        yp[b, row, col] += w[i, j] @ x[b, r, q]
    return yp[:, top : top + out_hw[0], left : left + out_hw[1]]


@st.composite
def transpose_case(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (1, 1) if max(stride) > 1 else (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    out_h, out_w = draw(st.integers(kh * dilation[0], 7)), draw(st.integers(kw * dilation[1], 7))
    h, w_ = (
        (math.ceil(out_h / stride[0]), math.ceil(out_w / stride[1]))
        if padding == "SAME"
        else (
            (out_h - (kh - 1) * dilation[0] - 1) // stride[0] + 1,
            (out_w - (kw - 1) * dilation[1] - 1) // stride[1] + 1,
        )
    )
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, h, w_, c))
    w = rng.standard_normal((kh, kw, o, c))
    return x, w, (n, out_h, out_w, o), stride, padding, dilation


@settings(max_examples=40)
@given(transpose_case())
def test_forward_matches_the_scatter_oracle(case):
    x, w, shape, stride, padding, dilation = case
    got = conv2d_transpose(x, w, shape, stride, padding, dilations=dilation).numpy()
    expected = reference_conv2d_transpose(x, w, shape[1:3], stride, padding, dilation)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


@settings(max_examples=20)
@given(transpose_case())
def test_is_the_adjoint_of_conv2d(case):
    """<conv2d(z, w), x> == <z, conv2d_transpose(x, w)> for every z of the output shape."""
    x, w, shape, stride, padding, dilation = case
    z = np.random.default_rng(5).standard_normal(shape)
    forward = reference_conv2d(z, w, stride, padding, dilation)
    transposed = conv2d_transpose(x, w, shape, stride, padding, dilations=dilation).numpy()
    np.testing.assert_allclose(np.sum(forward * x), np.sum(z * transposed), rtol=1e-9)


@settings(max_examples=15)
@given(transpose_case())
def test_gradients_match_finite_differences(case):
    x, w, shape, stride, padding, dilation = case
    check_gradients(
        lambda a, b: conv2d_transpose(a, b, shape, stride, padding, dilations=dilation), x, w
    )


def test_float32_stays_float32_in_forward_and_gradients():
    x = tf.constant(np.ones((2, 3, 3, 2), np.float32))
    w = tf.Variable(np.ones((3, 3, 4, 2), np.float32))
    with tf.GradientTape() as tape:
        y = conv2d_transpose(x, w, [2, 6, 6, 4], 2, "SAME")
    assert y.dtype == tf.float32 and y.shape == (2, 6, 6, 4)
    gx, gw = tape.gradient(y, [x, w])
    assert np.asarray(gx).dtype == np.float32 and np.asarray(gw).dtype == np.float32


def test_output_shape_that_does_not_fit_the_input_is_refused():
    x = np.ones((1, 3, 3, 2), np.float32)
    w = np.ones((3, 3, 4, 2), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="gives spatial size"):
        conv2d_transpose(x, w, [1, 8, 8, 4], 2, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="do not fit"):
        conv2d_transpose(x, w, [1, 6, 6, 3], 2, "SAME")
