"""Transposed 2-D convolution (``tf.nn.conv2d_transpose``) and its gradients.

A transposed convolution is the input gradient of a convolution: for ``filters``
``[k_h, k_w, out_channels, in_channels]`` and an ``output_shape`` ``[batch, out_h, out_w,
out_channels]``, ``conv2d_transpose(x, filters)`` is what ``conv2d``'s backward pass gives for
an input of ``output_shape`` and an upstream gradient ``x``: the geometry (padding, strides,
dilations) is that of the forward convolution from ``output_shape`` to ``x``'s size, so
``x``'s height must be what that convolution outputs (``ceil(out_h / stride)`` for SAME).

Forward: col2im of ``x`` (one matmul per kernel offset added into its strided window, the
loop over offsets, never over pixels). Backward, with ``dy`` of ``output_shape``:
``d_x = conv2d(dy, filters)`` (im2col of ``dy`` and one matmul) and
``d_filters = im2col(dy)^T @ x``, reusing the same windows. Arithmetic stays in the input
dtype (float32 is never upcast).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.ops._helpers import as_tensors
from simdist.core.ops._windows import normalize_pair, pad_hw, resolve_padding
from simdist.core.ops.conv_ops import col2im_add, im2col
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["conv2d_transpose"]


def _output_shape(output_shape) -> list[int]:
    raw = output_shape.numpy() if isinstance(output_shape, Tensor) else output_shape
    shape = [int(d) for d in np.asarray(raw).reshape(-1)]
    if len(shape) != 4:
        raise ValueError(
            f"output_shape must have 4 elements [batch, height, width, channels], got {shape}."
        )
    return shape


def conv2d_transpose(
    input,
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NHWC",
    dilations=None,
    name=None,
) -> Tensor:
    """The transpose (input gradient) of ``conv2d``, NHWC.

    Args:
        input: ``[batch, height, width, in_channels]``.
        filters: ``[filter_height, filter_width, out_channels, in_channels]``.
        output_shape: ``[batch, out_height, out_width, out_channels]``.
        strides: an int, or a list of 1, 2 or 4 ints.
        padding: ``"SAME"`` or ``"VALID"`` (of the forward convolution).
        data_format: ``"NHWC"`` only.
        dilations: an int or list like ``strides`` (default 1).

    Returns:
        The ``output_shape`` result.

    Raises:
        InvalidArgumentError: bad ranks or channel counts, or an ``input`` whose size is not
            what the forward convolution from ``output_shape`` produces.
        UnimplementedError: ``data_format='NCHW'``.
    """
    if data_format != "NHWC":
        raise errors.UnimplementedError("simdist's conv2d_transpose supports NHWC only.")
    x, f = as_tensors("Conv2DBackpropInput", input, filters)
    xv, wv = x._value, f._value
    if xv.ndim != 4 or wv.ndim != 4:
        raise errors.InvalidArgumentError(
            f"conv2d_transpose needs a 4-D input and 4-D filters, got shapes {list(xv.shape)} "
            f"and {list(wv.shape)}."
        )
    n, out_h, out_w, out_c = _output_shape(output_shape)
    kh, kw, f_out, f_in = wv.shape
    if f_in != xv.shape[3] or f_out != out_c or n != xv.shape[0]:
        raise errors.InvalidArgumentError(
            f"conv2d_transpose: input {list(xv.shape)}, filters {list(wv.shape)} ([height, "
            f"width, out_channels, in_channels]) and output_shape {[n, out_h, out_w, out_c]} "
            "do not fit: the filters' last axis must be the input's channels, their third "
            "the output's, and the batch sizes equal."
        )
    stride_hw = normalize_pair(strides, "strides")
    dilation_hw = normalize_pair(1 if dilations is None else dilations, "dilations")
    h, w = resolve_padding(
        padding, (out_h, out_w), (kh, kw), stride_hw, dilation_hw, allow_explicit=False
    )
    if (h.out, w.out) != tuple(xv.shape[1:3]):
        raise errors.InvalidArgumentError(
            f"conv2d_transpose: a {padding} convolution of output_shape "
            f"{[n, out_h, out_w, out_c]} with strides {list(stride_hw)} gives spatial size "
            f"{[h.out, w.out]}, but the input's is {list(xv.shape[1:3])}."
        )
    x2 = np.ascontiguousarray(xv).reshape(-1, f_in)
    wt = np.ascontiguousarray(wv.transpose(0, 1, 3, 2))  # [kh, kw, in, out] for col2im
    yp = np.zeros((n, h.padded, w.padded, out_c), dtype=xv.dtype)
    col2im_add(yp, x2, wt, h, w)
    yv = np.ascontiguousarray(yp[:, h.before : h.before + out_h, w.before : w.before + out_w])
    out = make_tensor(yv, x.dtype)
    cache: dict = {}

    def windows(g: np.ndarray) -> np.ndarray:
        if cache.get("g") is not g:  # both vjps read the same upstream gradient's windows
            cache["g"], cache["cols"] = g, im2col(pad_hw(np.ascontiguousarray(g), h, w), h, w)
        return cache["cols"]

    def grad_x(g: np.ndarray) -> np.ndarray:
        wm = wv.reshape(kh * kw * out_c, f_in)
        return np.matmul(windows(g), wm).reshape(xv.shape)

    def grad_f(g: np.ndarray) -> np.ndarray:
        return np.matmul(windows(g).T, x2).reshape(wv.shape)

    record("Conv2DBackpropInput", [x, f], [out], [grad_x, grad_f])
    return out
