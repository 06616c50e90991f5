"""conv2d against a plain loop oracle, its gradients, layouts, and TF's argument errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
import simdist.nn as nn
from simdist import errors
from tests.gradcheck import check_gradients


def reference_conv2d(x, w, stride, padding, dilation=(1, 1)):
    """The oracle: NHWC cross-correlation by plain loops, padding by TF's stated rule."""
    n, height, width, c = x.shape
    kh, kw, _, o = w.shape
    pads = []
    for size, k, s, d in (
        (height, kh, stride[0], dilation[0]),
        (width, kw, stride[1], dilation[1]),
    ):
        eff = (k - 1) * d + 1
        if padding == "SAME":
            out = math.ceil(size / s)
            total = max((out - 1) * s + eff - size, 0)
            pads.append((total // 2, total - total // 2))
        else:
            pads.append((0, 0))
    xp = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    eff_h, eff_w = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    out_h = (xp.shape[1] - eff_h) // stride[0] + 1
    out_w = (xp.shape[2] - eff_w) // stride[1] + 1
    y = np.zeros((n, out_h, out_w, o))
    for b in range(n):
        for r in range(out_h):
            for q in range(out_w):
                for oc in range(o):
                    total = 0.0
                    for i in range(kh):
                        for j in range(kw):
                            for ic in range(c):
                                pixel = xp[
                                    b,
                                    r * stride[0] + i * dilation[0],
                                    q * stride[1] + j * dilation[1],
                                    ic,
                                ]
                                total += pixel * w[i, j, ic, oc]
                    y[b, r, q, oc] = total
    return y


@st.composite
def conv_case(draw, max_side=7):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    height, width = draw(st.integers(kh, max_side)), draw(st.integers(kw, max_side))
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, height, width, c))
    w = rng.standard_normal((kh, kw, c, o))
    return x, w, stride, padding


@settings(max_examples=40)
@given(conv_case())
def test_forward_matches_the_loop_oracle(case):
    x, w, stride, padding = case
    got = nn.conv2d(x, w, list(stride), padding).numpy()
    np.testing.assert_allclose(got, reference_conv2d(x, w, stride, padding), rtol=1e-10, atol=1e-12)


@settings(max_examples=20)
@given(conv_case(max_side=5))
def test_gradients_match_finite_differences(case):
    x, w, stride, padding = case
    check_gradients(lambda a, b: nn.conv2d(a, b, list(stride), padding), x, w)


@settings(max_examples=10)
@given(conv_case(max_side=6), st.integers(1, 2))
def test_dilated_forward_and_gradients(case, dilation):
    x, w, _, padding = case
    eff = [(k - 1) * dilation + 1 for k in w.shape[:2]]
    if padding == "VALID" and (x.shape[1] < eff[0] or x.shape[2] < eff[1]):
        return
    got = nn.conv2d(x, w, 1, padding, dilations=dilation).numpy()
    expected = reference_conv2d(x, w, (1, 1), padding, (dilation, dilation))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    check_gradients(lambda a, b: nn.conv2d(a, b, 1, padding, dilations=dilation), x, w)


def test_stride_forms_and_same_output_size():
    x = np.random.default_rng(0).standard_normal((1, 7, 6, 2))
    w = np.random.default_rng(1).standard_normal((3, 3, 2, 4))
    first = nn.conv2d(x, w, 2, "SAME").numpy()
    assert first.shape == (1, 4, 3, 4)
    for strides in ([2], [2, 2], [1, 2, 2, 1], (2, 2)):
        np.testing.assert_array_equal(nn.conv2d(x, w, strides, "SAME").numpy(), first)


def test_explicit_padding_equals_padding_by_hand():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 5, 5, 1)), rng.standard_normal((3, 3, 1, 4))
    pads = [[0, 0], [1, 2], [0, 1], [0, 0]]
    got = nn.conv2d(x, w, 1, pads).numpy()
    assert got.shape == (2, 6, 4, 4)
    np.testing.assert_allclose(got, nn.conv2d(np.pad(x, pads), w, 1, "VALID").numpy())
    check_gradients(lambda a, b: nn.conv2d(a, b, 1, pads), x[:1], w[:, :, :, :2])


def test_nchw_is_the_transposed_nhwc():
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 6, 5, 3)), rng.standard_normal((2, 3, 3, 2))
    nhwc = nn.conv2d(x, w, [1, 2], "SAME").numpy()
    nchw = nn.conv2d(x.transpose(0, 3, 1, 2), w, [1, 1, 1, 2], "SAME", data_format="NCHW")
    np.testing.assert_allclose(nchw.numpy(), nhwc.transpose(0, 3, 1, 2), rtol=1e-12)
    check_gradients(
        lambda a, b: nn.conv2d(a, b, 1, "SAME", data_format="NCHW"),
        x[:1, :4, :4].transpose(0, 3, 1, 2),
        w,
    )


def test_extra_leading_batch_dimensions():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 3, 5, 5, 1)), rng.standard_normal((3, 3, 1, 2))
    got = nn.conv2d(x, w, 1, "VALID").numpy()
    assert got.shape == (2, 3, 3, 3, 2)
    np.testing.assert_allclose(got[1, 2], nn.conv2d(x[1, 2:3], w, 1, "VALID").numpy()[0])
    check_gradients(lambda a, b: nn.conv2d(a, b, 1, "VALID"), x[:, :2, :4, :4], w)


def test_float32_stays_float32_in_forward_and_gradients():
    x = tf.constant(np.ones((2, 5, 5, 2), np.float32))
    w = tf.constant(np.ones((3, 3, 2, 3), np.float32))
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = nn.conv2d(x, w, 1, "SAME")
    gx, gw = tape.gradient(y, [x, w])
    assert y.dtype == gx.dtype == gw.dtype == tf.float32
    assert gx.numpy().dtype == gw.numpy().dtype == np.float32


def test_argument_errors():
    x, w = np.zeros((1, 5, 5, 3), np.float32), np.zeros((3, 3, 1, 4), np.float32)
    with pytest.raises(
        errors.InvalidArgumentError, match="input depth 3 must equal filter in_channels 1"
    ):
        nn.conv2d(x, w, 1, "VALID")
    w = np.zeros((3, 3, 3, 4), np.float32)
    with pytest.raises(
        ValueError,
        match=r"strides should be of length 1, 2 or 4. Received: strides=\[1, 2, 2\] of length 3",
    ):
        nn.conv2d(x, w, [1, 2, 2], "VALID")
    with pytest.raises(errors.UnimplementedError, match="batch and depth"):
        nn.conv2d(x, w, [2, 1, 1, 1], "VALID")
    with pytest.raises(errors.InvalidArgumentError, match='"SAME" or "VALID"'):
        nn.conv2d(x, w, 1, "same")
    with pytest.raises(errors.InvalidArgumentError, match="Computed output size would be negative"):
        nn.conv2d(np.zeros((1, 2, 2, 3), np.float32), w, 1, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="4-dimensional"):
        nn.conv2d(np.zeros((5, 5, 3), np.float32), w, 1, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="double tensor"):
        nn.conv2d(tf.constant(x), tf.constant(w.astype(np.float64)), 1, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="explicit padding"):
        nn.conv2d(x, w, 1, [[1, 1], [1, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="data_format"):
        nn.conv2d(x, w, 1, "VALID", data_format="NWHC")
