"""max/avg pooling against a loop oracle, their gradients, TF's tie rule and errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
import simdist.nn as nn
from simdist import errors
from tests.gradcheck import check_gradients


def reference_pool(x, k, stride, padding, kind):
    """The oracle: per output, the max or mean of the window's real (unpadded) inputs."""
    n, height, width, c = x.shape
    starts = []
    for size, kk, s in ((height, k[0], stride[0]), (width, k[1], stride[1])):
        if padding == "SAME":
            out = math.ceil(size / s)
            before = max((out - 1) * s + kk - size, 0) // 2
        else:
            out, before = (size - kk) // s + 1, 0
        starts.append([r * s - before for r in range(out)])
    y = np.zeros((n, len(starts[0]), len(starts[1]), c))
    for b in range(n):
        for r, top in enumerate(starts[0]):
            for q, left in enumerate(starts[1]):
                for ch in range(c):
                    rows = slice(max(top, 0), min(top + k[0], height))
                    cols = slice(max(left, 0), min(left + k[1], width))
                    window = x[b, rows, cols, ch]
                    y[b, r, q, ch] = window.max() if kind == "max" else window.mean()
    return y


@st.composite
def pool_case(draw, max_side=7):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    shape = (
        draw(st.integers(1, 2)),
        draw(st.integers(k[0], max_side)),
        draw(st.integers(k[1], max_side)),
        draw(st.integers(1, 3)),
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.permutation(np.prod(shape)).reshape(shape) * 0.1  # distinct: no ties
    return x.astype(np.float64), k, stride, padding


POOLS = {"max": nn.max_pool2d, "avg": nn.avg_pool2d}


@pytest.mark.parametrize("kind", ["max", "avg"])
@settings(max_examples=30)
@given(case=pool_case())
def test_forward_matches_the_loop_oracle(kind, case):
    x, k, stride, padding = case
    got = POOLS[kind](x, list(k), list(stride), padding).numpy()
    np.testing.assert_allclose(got, reference_pool(x, k, stride, padding, kind), rtol=1e-12)


@pytest.mark.parametrize("kind", ["max", "avg"])
@settings(max_examples=20)
@given(case=pool_case(max_side=5))
def test_gradients_match_finite_differences(kind, case):
    x, k, stride, padding = case
    check_gradients(lambda t: POOLS[kind](t, list(k), list(stride), padding), x)


def test_same_padding_values_match_tf():
    x = np.arange(25.0).reshape(1, 5, 5, 1)
    np.testing.assert_array_equal(
        nn.max_pool2d(x, 2, 2, "SAME").numpy()[0, :, :, 0],
        [[6, 8, 9], [16, 18, 19], [21, 23, 24]],
    )
    np.testing.assert_array_equal(
        nn.avg_pool2d(x, 2, 2, "SAME").numpy()[0, :, :, 0],
        [[3, 5, 6.5], [13, 15, 16.5], [20.5, 22.5, 24]],
    )


def _max_pool_grad(values, k, s):
    x = tf.constant(np.array(values, np.float32)[None, :, :, None])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = nn.max_pool2d(x, k, s, "VALID")
    return tape.gradient(y, x).numpy()[0, :, :, 0].tolist()


def test_max_pool_ties_send_the_gradient_to_the_first_maximum():
    # The same results as TF's MaxPoolGrad on these inputs.
    assert _max_pool_grad([[1, 3], [3, 2]], 2, 2) == [[0, 1], [0, 0]]
    assert _max_pool_grad([[3, 3, 1], [3, 3, 1], [0, 0, 0]], 2, 1) == [
        [1, 1, 0],
        [1, 1, 0],
        [0, 0, 0],
    ]
    assert _max_pool_grad([[5, 5], [5, 5]], 2, 2) == [[1, 0], [0, 0]]


def test_nchw_and_float32():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    for fn in POOLS.values():
        nhwc = fn(x, 3, 2, "SAME")
        nchw = fn(x.transpose(0, 3, 1, 2), [1, 1, 3, 3], [1, 1, 2, 2], "SAME", "NCHW")
        assert nhwc.dtype == nchw.dtype == tf.float32
        np.testing.assert_allclose(nchw.numpy(), nhwc.numpy().transpose(0, 3, 1, 2), rtol=1e-6)
    check_gradients(
        lambda t: nn.max_pool2d(t, 2, 1, "SAME", data_format="NCHW"),
        rng.permutation(2 * 3 * 4 * 4).reshape(2, 3, 4, 4) * 0.1,
    )


def test_max_pool_on_3d_and_4d_inputs():
    x = np.array([[[1.0], [4.0], [2.0], [3.0]]])
    np.testing.assert_array_equal(nn.max_pool(x, 2, 2, "VALID").numpy(), [[[4.0], [3.0]]])
    np.testing.assert_array_equal(nn.avg_pool(x, 2, 2, "VALID").numpy(), [[[2.5], [2.5]]])
    check_gradients(lambda t: nn.max_pool(t, 2, 1, "SAME"), x)
    x4 = np.arange(16.0).reshape(1, 4, 4, 1)
    np.testing.assert_array_equal(
        nn.max_pool(x4, 2, 2, "VALID").numpy(), nn.max_pool2d(x4, 2, 2, "VALID").numpy()
    )


def test_integer_inputs_and_errors():
    xi = tf.constant(np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1))
    np.testing.assert_array_equal(
        nn.max_pool2d(xi, 2, 2, "SAME").numpy()[0, :, :, 0], [[5, 7], [13, 15]]
    )
    with pytest.raises(errors.InvalidArgumentError, match="float"):
        nn.avg_pool2d(xi, 2, 2, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="4-dimensional"):
        nn.max_pool2d(np.zeros((5, 5, 1)), 2, 2, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="Computed output size would be negative"):
        nn.max_pool2d(np.zeros((1, 1, 1, 1)), 2, 2, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match='"SAME" or "VALID"'):
        nn.max_pool2d(np.zeros((1, 4, 4, 1)), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="ksize should be of length 1, 2 or 4"):
        nn.max_pool2d(np.zeros((1, 4, 4, 1)), [2, 2, 2], 2, "VALID")


def reference_max_pool_grad(x, k, stride, g):
    """VALID max-pool gradient by loops: each output's gradient to its window's first max."""
    dx = np.zeros_like(x)
    for b, r, q, ch in np.ndindex(g.shape):
        window = x[b, r * stride : r * stride + k, q * stride : q * stride + k, ch]
        i, j = np.unravel_index(np.argmax(window), window.shape)  # argmax: first, row-major
        dx[b, r * stride + i, q * stride + j, ch] += g[b, r, q, ch]
    return dx


@settings(max_examples=30)
@given(
    k=st.integers(1, 3),
    stride=st.integers(1, 3),
    shape=st.tuples(st.integers(1, 2), st.integers(3, 7), st.integers(3, 7), st.integers(1, 2)),
    seed=st.integers(0, 2**16),
)
def test_max_pool_gradient_with_many_ties_matches_the_loop_oracle(k, stride, shape, seed):
    rng = np.random.default_rng(seed)
    x = np.maximum(rng.integers(-2, 3, size=shape), 0).astype(np.float64)  # relu-like zeros
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = nn.max_pool2d(xt, k, stride, "VALID")
    g = rng.standard_normal(y.shape)
    got = tape.gradient(y, xt, output_gradients=tf.constant(g)).numpy()
    np.testing.assert_allclose(got, reference_max_pool_grad(x, k, stride, g), rtol=1e-12)


def test_non_overlapping_max_pool_across_several_blocks_matches_an_argmax_oracle():
    # 30 images of 26x27x16: the window-major path cuts them into two blocks (23 images of
    # a quarter Mi elements, then 7); relu-like zeros tie in many windows, and the odd width
    # leaves a ragged edge.
    rng = np.random.default_rng(7)
    x = np.maximum(rng.integers(-2, 3, size=(30, 26, 27, 16)), 0).astype(np.float32)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = nn.max_pool2d(xt, 2, 2, "VALID")
    g = rng.standard_normal(y.shape).astype(np.float32)
    got = tape.gradient(y, xt, output_gradients=tf.constant(g)).numpy()
    # the oracle, vectorised: each window's first argmax (row-major) gets its gradient
    windows = x[:, :, :26].reshape(30, 13, 2, 13, 2, 16).transpose(0, 1, 3, 5, 2, 4)
    windows = windows.reshape(30, 13, 13, 16, 4)
    first = np.argmax(windows, axis=-1)[..., None]
    routed = np.zeros_like(windows)
    np.put_along_axis(routed, first, g[..., None], axis=-1)
    want = np.zeros_like(x)
    want[:, :, :26] = (
        routed.reshape(30, 13, 13, 16, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(30, 26, 26, 16)
    )
    np.testing.assert_array_equal(y.numpy(), windows.max(axis=-1))
    np.testing.assert_array_equal(got, want)


def test_max_pool_kernels_keep_masks_only_when_asked_and_route_by_them():
    # The op asks for the masks whenever a tape is active; without one the forward keeps none.
    from simdist.core.ops import pool_ops
    from simdist.core.ops._windows import resolve_padding

    rng = np.random.default_rng(3)
    x = np.maximum(rng.integers(-2, 3, size=(5, 9, 8, 4)), 0).astype(np.float32)
    h, w = resolve_padding("VALID", x.shape[1:3], (3, 3), (3, 3))
    y, masks = pool_ops._max_forward(x, h, w, masks_wanted=True)
    y_alone, none = pool_ops._max_forward(x, h, w, masks_wanted=False)
    assert none is None and y_alone.tobytes() == y.tobytes()
    assert masks.shape == (9, *y.shape) and (masks.sum(axis=0) == 1).all()  # one per window
    g = rng.standard_normal(y.shape).astype(np.float32)
    got = pool_ops._max_backward(g, y, x.shape, masks, h, w)
    np.testing.assert_array_equal(got, reference_max_pool_grad(x, 3, 3, g))


def test_a_window_holding_nan_pools_to_nan_and_gets_no_gradient():
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2)
    x[0, 0, 1, 0] = np.nan
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = nn.max_pool2d(xt, 2, 2, "VALID")
    dx = tape.gradient(y, xt).numpy()
    assert np.isnan(y.numpy()[0, 0, 0, 0]) and np.isnan(y.numpy()).sum() == 1
    assert dx[0, :2, :2, 0].sum() == 0 and dx.sum() == 7  # the other 7 windows: 1 each
