"""Depthwise and separable 2-D convolution (``tf.nn.depthwise_conv2d``,
``tf.nn.separable_conv2d``) and their gradients.

A depthwise convolution convolves each input channel with its own ``channel_multiplier``
filters: for ``filter`` ``[k_h, k_w, in_channels, multiplier]``, output channel
``c * multiplier + m`` is input channel ``c`` correlated with ``filter[:, :, c, m]``.
Geometry (strides, dilations, SAME/VALID padding) is ``conv2d``'s.

Forward: per kernel offset ``(i, j)`` and multiplier ``k``, the strided window of the padded
input ``[n, out_h, out_w, in]`` times ``filter[i, j, :, k]``, added into output block ``k``
(a loop over the ``k_h * k_w * multiplier`` products, each vectorised over pixels and
contiguous channels). Backward: per offset and ``k``, ``d_filter[i, j, :, k] = sum over
pixels of window * dy_k`` and ``dy_k * filter[i, j, :, k]`` added into the window of
``d_input``.
Arithmetic stays in the input dtype. ``separable_conv2d`` is the depthwise convolution
followed by a 1x1 ``conv2d`` (the pointwise filter), as TF composes it.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.ops._helpers import as_tensors
from simdist.core.ops._windows import normalize_pair, offset_slices, pad_hw, resolve_padding
from simdist.core.ops.conv_ops import conv2d
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["depthwise_conv2d", "separable_conv2d"]


def depthwise_conv2d(
    input,
    filter,
    strides,
    padding,
    data_format=None,
    dilations=None,
    name=None,
) -> Tensor:
    """Each input channel convolved with its own filters (see the module docstring).

    Args:
        input: ``[batch, height, width, in_channels]`` (NHWC).
        filter: ``[filter_height, filter_width, in_channels, channel_multiplier]``.
        strides: an int, or a list of 1, 2 or 4 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"`` (or None).
        dilations: an int or list like ``strides`` (default 1).

    Returns:
        ``[batch, out_height, out_width, in_channels * channel_multiplier]``.

    Raises:
        InvalidArgumentError: bad ranks, a channel mismatch, or a window larger than the
            padded input.
        UnimplementedError: ``data_format='NCHW'``.
    """
    if data_format not in (None, "NHWC"):
        raise errors.UnimplementedError("simdist's depthwise_conv2d supports NHWC only.")
    x, f = as_tensors("DepthwiseConv2dNative", input, filter)
    xv, wv = x._value, f._value
    if xv.ndim != 4 or wv.ndim != 4 or wv.shape[2] != xv.shape[3]:
        raise errors.InvalidArgumentError(
            f"depthwise_conv2d needs input [batch, height, width, channels] and filter "
            f"[height, width, channels, multiplier] with the same channels; got input "
            f"{list(xv.shape)} and filter {list(wv.shape)}."
        )
    kh, kw, channels, multiplier = wv.shape
    stride_hw = normalize_pair(strides, "strides")
    dilation_hw = normalize_pair(1 if dilations is None else dilations, "dilations")
    h, w = resolve_padding(
        padding, xv.shape[1:3], (kh, kw), stride_hw, dilation_hw, allow_explicit=False
    )
    n = xv.shape[0]
    xp = pad_hw(np.ascontiguousarray(xv), h, w)
    # per multiplier k, a channels-last [n, out_h, out_w, in] block: every product runs over
    # contiguous channels (a trailing multiplier axis of 1 or 2 would not vectorise)
    blocks = np.zeros((multiplier, n, h.out, w.out, channels), dtype=xv.dtype)
    product = np.empty(blocks.shape[1:], dtype=xv.dtype)
    for i in range(kh):
        for j in range(kw):
            window = xp[offset_slices(i, j, h, w)]
            for k in range(multiplier):
                np.multiply(window, wv[i, j, :, k], out=product)
                blocks[k] += product
    y = np.moveaxis(blocks, 0, -1).reshape(n, h.out, w.out, channels * multiplier)
    out = make_tensor(np.ascontiguousarray(y), x.dtype)

    def per_multiplier(g: np.ndarray) -> np.ndarray:
        """``g`` as [multiplier, n, out_h, out_w, in] (contiguous)."""
        g5 = g.reshape(n, h.out, w.out, channels, multiplier)
        return np.ascontiguousarray(np.moveaxis(g5, -1, 0))

    def grad_x(g: np.ndarray) -> np.ndarray:
        gm = per_multiplier(g)
        dxp = np.zeros(xp.shape, dtype=g.dtype)
        scaled = np.empty(gm.shape[1:], dtype=g.dtype)
        for i in range(kh):
            for j in range(kw):
                target = dxp[offset_slices(i, j, h, w)]
                for k in range(multiplier):
                    np.multiply(gm[k], wv[i, j, :, k], out=scaled)
                    target += scaled
        return dxp[:, h.before : h.before + h.size, w.before : w.before + w.size]

    def grad_f(g: np.ndarray) -> np.ndarray:
        gm = per_multiplier(g).reshape(multiplier, -1, channels)
        df = np.empty(wv.shape, dtype=g.dtype)
        for i in range(kh):
            for j in range(kw):
                window = xp[offset_slices(i, j, h, w)].reshape(-1, channels)
                for k in range(multiplier):
                    df[i, j, :, k] = np.einsum("pc,pc->c", window, gm[k])
        return df

    record("DepthwiseConv2dNative", [x, f], [out], [grad_x, grad_f])
    return out


def separable_conv2d(
    input,
    depthwise_filter,
    pointwise_filter,
    strides,
    padding,
    data_format=None,
    dilations=None,
    name=None,
) -> Tensor:
    """``conv2d(depthwise_conv2d(input, depthwise_filter), pointwise_filter)`` (1x1, VALID).

    Raises:
        InvalidArgumentError: as ``depthwise_conv2d``, or a pointwise filter that is not
            ``[1, 1, in_channels * multiplier, out_channels]``.
    """
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format, dilations)
    (pointwise,) = as_tensors("Conv2D", pointwise_filter)
    if tuple(pointwise.shape[:2]) != (1, 1):
        raise errors.InvalidArgumentError(
            f"separable_conv2d: the pointwise filter must be [1, 1, in, out], got "
            f"{list(pointwise.shape)}."
        )
    return conv2d(depthwise, pointwise, strides=1, padding="VALID")
