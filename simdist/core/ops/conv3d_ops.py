"""3-D convolution and pooling over ``[batch, depth, height, width, channels]`` (NDHWC), with
their gradients (TF's ``Conv3D``, ``MaxPool3D``, ``AvgPool3D``).

Each spatial axis is padded as TF pads it: ``VALID`` not at all; ``SAME`` by
``max((out - 1) * stride + span - size, 0)`` with ``out = ceil(size / stride)``, the smaller
half before (``span = (window - 1) * dilation + 1``). The kernels run one window offset at a
time: a convolution adds, for each of the ``kd * kh * kw`` kernel positions, the strided
slice of the padded input times that position's ``[in, out]`` matrix; its gradients put
each slice's share back (the input's) and multiply slice by output gradient (the kernel's).
Max pooling pads with ``-inf`` and sends each window's gradient to its first maximum in
window order (depth, then height, then width); average pooling divides by the number of
real (unpadded) elements in the window, as TF does.
"""

from __future__ import annotations

import itertools

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import as_tensors
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["conv3d", "max_pool3d", "avg_pool3d"]


def _triple(value, name: str, op: str) -> tuple[int, int, int]:
    values = [int(v) for v in np.asarray(value).reshape(-1)]
    if len(values) == 1:
        values = values * 3
    elif len(values) == 5:
        if values[0] != 1 or values[4] != 1:
            raise errors.InvalidArgumentError(
                f"{op}: {name} in the batch and channel dimensions must be 1, got {values}."
            )
        values = values[1:4]
    if len(values) != 3 or any(v <= 0 for v in values):
        raise errors.InvalidArgumentError(
            f"{op}: {name} must be 1, 3 or 5 positive integers, got {value!r}."
        )
    return tuple(values)


def _pads(sizes, windows, strides, dilations, padding: str, op: str):
    padding = str(padding).upper()
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{op}: padding must be 'SAME' or 'VALID', got {padding!r}.")
    pads, outs = [], []
    for size, window, stride, dilation in zip(sizes, windows, strides, dilations, strict=True):
        span = (window - 1) * dilation + 1
        if padding == "VALID":
            if size < span:
                raise errors.InvalidArgumentError(
                    f"{op}: a window of {span} does not fit an input dimension of {size}."
                )
            pads.append((0, 0))
            outs.append((size - span) // stride + 1)
        else:
            out = -(-size // stride)
            total = max((out - 1) * stride + span - size, 0)
            pads.append((total // 2, total - total // 2))
            outs.append(out)
    return pads, outs


def _window(offset, dilation, stride, out):
    start = offset * dilation
    return slice(start, start + (out - 1) * stride + 1, stride)


def _check_input(op: str, x: Tensor) -> np.ndarray:
    value = x._value
    if value.ndim != 5:
        raise errors.InvalidArgumentError(
            f"{op}: input must be 5-dimensional [batch, depth, height, width, channels], got "
            f"shape {list(value.shape)}."
        )
    return value


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """``tf.nn.conv3d`` (NDHWC): ``filters`` ``[kd, kh, kw, in, out]``.

    Raises:
        InvalidArgumentError: an input that is not 5-D, a kernel whose input depth differs
            from the input's channels, bad strides or dilations.
        NotImplementedError: ``data_format='NCDHW'``.
    """
    if data_format not in (None, "NDHWC"):
        raise NotImplementedError("simdist's conv3d supports data_format='NDHWC' only.")
    x, w = as_tensors("Conv3D", input, filters)
    xv, wv = _check_input("Conv3D", x), w._value
    if wv.ndim != 5 or wv.shape[3] != xv.shape[4]:
        raise errors.InvalidArgumentError(
            f"Conv3D: the filter {list(wv.shape)} must be [depth, height, width, "
            f"{xv.shape[4]}, out] for an input of {xv.shape[4]} channels."
        )
    strides3 = _triple(strides, "strides", "Conv3D")
    dilations3 = _triple(1 if dilations is None else dilations, "dilations", "Conv3D")
    pads, outs = _pads(xv.shape[1:4], wv.shape[:3], strides3, dilations3, padding, "Conv3D")
    xp = np.pad(xv, [(0, 0), *pads, (0, 0)])
    offsets = list(itertools.product(*(range(k) for k in wv.shape[:3])))

    def windows(offset):
        return (slice(None), *(_window(o, d, s, n) for o, d, s, n in
                               zip(offset, dilations3, strides3, outs, strict=True)))  # fmt: skip

    out = np.zeros((xv.shape[0], *outs, wv.shape[4]), np.result_type(xv, wv))
    for offset in offsets:
        out += np.tensordot(xp[windows(offset)], wv[offset], axes=([4], [0]))
    result = make_tensor(out, x.dtype)

    def grad_input(g):
        dxp = np.zeros(xp.shape, out.dtype)
        for offset in offsets:
            dxp[windows(offset)] += np.tensordot(g, wv[offset], axes=([4], [1]))
        (d0, _), (h0, _), (w0, _) = pads
        return dxp[:, d0 : d0 + xv.shape[1], h0 : h0 + xv.shape[2], w0 : w0 + xv.shape[3]]

    def grad_filters(g):
        dw = np.zeros(wv.shape, out.dtype)
        for offset in offsets:
            dw[offset] = np.tensordot(xp[windows(offset)], g, axes=([0, 1, 2, 3], [0, 1, 2, 3]))
        return dw

    record("Conv3D", [x, w], [result], [grad_input, grad_filters])
    return result


def _pool3d(op: str, input, ksize, strides, padding, data_format, is_max: bool) -> Tensor:
    if data_format not in (None, "NDHWC"):
        raise NotImplementedError(f"simdist's {op} supports data_format='NDHWC' only.")
    x = convert_to_tensor(input)
    xv = _check_input(op, x)
    windows3, strides3 = _triple(ksize, "ksize", op), _triple(strides, "strides", op)
    pads, outs = _pads(xv.shape[1:4], windows3, strides3, (1, 1, 1), padding, op)
    fill = -np.inf if is_max else 0
    xp = np.pad(xv, [(0, 0), *pads, (0, 0)], constant_values=fill)
    offsets = list(itertools.product(*(range(k) for k in windows3)))

    def windows(offset):
        return (slice(None), *(_window(o, 1, s, n) for o, s, n in
                               zip(offset, strides3, outs, strict=True)))  # fmt: skip

    if is_max:
        out = np.full((xv.shape[0], *outs, xv.shape[4]), -np.inf, xv.dtype)
        for offset in offsets:
            np.maximum(out, xp[windows(offset)], out=out)
        counts = None
    else:
        ones = np.pad(np.ones(xv.shape[1:4], xv.dtype), pads)
        counts = np.zeros(outs, xv.dtype)
        out = np.zeros((xv.shape[0], *outs, xv.shape[4]), xv.dtype)
        for offset in offsets:
            out += xp[windows(offset)]
            counts += ones[windows(offset)[1:]]
        out /= counts[None, ..., None]
    result = make_tensor(out.astype(xv.dtype), x.dtype)

    def grad(g):
        dxp = np.zeros(xp.shape, xv.dtype)
        if is_max:
            taken = np.zeros(out.shape, bool)
            for offset in offsets:
                first = (xp[windows(offset)] == out) & ~taken
                taken |= first
                dxp[windows(offset)] += np.where(first, g, 0)
        else:
            share = g / counts[None, ..., None]
            for offset in offsets:
                dxp[windows(offset)] += share
        (d0, _), (h0, _), (w0, _) = pads
        return dxp[:, d0 : d0 + xv.shape[1], h0 : h0 + xv.shape[2], w0 : w0 + xv.shape[3]]

    record(op, [x], [result], [grad])
    return result


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None) -> Tensor:
    """``tf.nn.max_pool3d``: the maximum of each window (padding never wins)."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, is_max=True)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None) -> Tensor:
    """``tf.nn.avg_pool3d``: the mean of each window's real elements."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, is_max=False)
