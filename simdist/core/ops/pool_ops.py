"""2-D max and average pooling (``tf.nn.max_pool2d``, ``avg_pool2d``) with their gradients.

Forward: windows are reduced with one strided slice per window offset (``np.maximum`` or
``np.add`` into one buffer), never a loop over pixels. ``"SAME"`` padding is never chosen
by max pooling (padded with -inf) and never counted by average pooling (each output
divides by its number of real inputs), as TF.

Gradients: average pooling spreads each output's gradient evenly over its real inputs; max
pooling sends it to the *first* maximum of the window in row-major order (TF's
MaxPoolGrad rule), so ties (the zeros after a relu) are broken deterministically.

Non-overlapping ``"VALID"`` max pooling (stride == window, the Keras default) copies a few
images at a time into window-major order (``[kh*kw, n, Ho, Wo, C]``, one strided copy), so
that the maxima and the first-maximum masks are passes over contiguous memory: a NumPy pass
over a strided window view walks runs of C elements, which for the tutorial CNN's 32
channels is several times slower than the same pass over contiguous memory. The masks are
kept from the forward (one byte per input element) when a tape records it, and the backward
only multiplies and copies back. For the tutorial CNN's first pooling at batch 64 (26x26x32
inputs), forward and backward took 7.7 ms with passes over window views and 4.1 ms this way
(``scenarios/bench_pooling.py``; at 16 images, in cache either way, about the same).
Overlapping windows keep the strided passes.

Max pooling works a few images at a time (blocks of input elements: a quarter Mi for the
window-major path, 1 Mi for overlapping windows), which ``simdist.core.intra_op`` would
share among its threads if a block held enough arithmetic to pay for a GIL hand-over across
CPUs; a few element-wise passes do not (its MIN_SHARED_FLOPS), so the blocks run on the
calling thread.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.context import state
from simdist.core.intra_op import items_per_block, run_blocks
from simdist.core.ops._helpers import as_tensors
from simdist.core.ops._windows import Axis, normalize_pair, offset_slices, pad_hw, resolve_padding
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["max_pool2d", "avg_pool2d", "max_pool", "avg_pool"]

_FORMATS = ("NHWC", "NCHW")
_BLOCK_ELEMENTS = 1 << 20  # input elements per block: a few images, ~4 MiB (fewer NumPy calls)
_WINDOW_MAJOR_BLOCK_ELEMENTS = 1 << 18  # the window-major path: its copies stay in cache
_PASSES = 4  # element-wise passes over a block's input, about (the backward's masks)


def _offsets(h: Axis, w: Axis):
    return ((i, j) for i in range(h.k) for j in range(w.k))  # row-major: tie order


def _non_overlapping(h: Axis, w: Axis) -> bool:
    padded = h.before or h.after or w.before or w.after
    return not padded and h.stride == h.k and w.stride == w.k


def _blocks(xv: np.ndarray, h: Axis, w: Axis) -> np.ndarray:
    """Non-overlapping windows as a [N, Ho, kh, Wo, kw, C] view (the ragged edge dropped).

    Splitting an axis in two never copies, so writing into the result writes into ``xv``.
    """
    n, c = xv.shape[0], xv.shape[3]
    core = xv[:, : h.out * h.k, : w.out * w.k, :]
    return core.reshape(n, h.out, h.k, w.out, w.k, c)


def _crop(dxp: np.ndarray, h: Axis, w: Axis) -> np.ndarray:
    return dxp[:, h.before : h.before + h.size, w.before : w.before + w.size, :]


def _window_major(xb: np.ndarray, h: Axis, w: Axis) -> np.ndarray:
    """A block's non-overlapping windows copied to ``[kh*kw, n, Ho, Wo, C]``, the offsets in
    row-major order (the tie order): each offset's elements one contiguous array."""
    n, c = xb.shape[0], xb.shape[3]
    out = np.empty((h.k, w.k, n, h.out, w.out, c), dtype=xb.dtype)
    np.copyto(out, _blocks(xb, h, w).transpose(2, 4, 0, 1, 3, 5))
    return out.reshape(h.k * w.k, n, h.out, w.out, c)


def _maximum_into(out: np.ndarray, windows) -> None:
    """``out`` = the element-wise maximum of ``windows``, taken in their order."""
    if len(windows) == 1:
        out[...] = windows[0]
        return
    np.maximum(windows[0], windows[1], out=out)
    for window in windows[2:]:
        np.maximum(out, window, out=out)


def _max_forward(xv: np.ndarray, h: Axis, w: Axis, masks_wanted: bool):
    """``(y, saved)`` for max pooling, a block of images per intra-op task.

    ``saved`` is what :func:`_max_backward` needs: for non-overlapping windows the
    first-maximum masks ``[kh*kw, N, Ho, Wo, C]`` (None unless ``masks_wanted``: the op asks
    for them whenever a tape is active, so a recorded op always has them), otherwise the
    padded input.
    """
    y = np.empty((xv.shape[0], h.out, w.out, xv.shape[3]), dtype=xv.dtype)
    if _non_overlapping(h, w):
        masks = np.empty((h.k * w.k,) + y.shape, dtype=bool) if masks_wanted else None

        def window_major_block(images: slice) -> None:
            windows = _window_major(xv[images], h, w)
            _maximum_into(y[images], windows)
            if masks is not None:
                _first_max_masks(windows, y[images], masks[:, images])

        _by_images(xv, window_major_block, _WINDOW_MAJOR_BLOCK_ELEMENTS)
        return y, masks
    fill = -np.inf if xv.dtype.kind == "f" else np.iinfo(xv.dtype).min
    xp = pad_hw(xv, h, w, fill)
    offsets = list(_offsets(h, w))

    def block(images: slice) -> None:
        _maximum_into(y[images], [xp[images][offset_slices(i, j, h, w)] for i, j in offsets])

    _by_images(xp, block, _BLOCK_ELEMENTS)
    return y, xp


def _by_images(xp: np.ndarray, block, block_elements: int) -> None:
    """``block(images)`` for each slice of a few images of ``xp`` (about ``block_elements``
    input elements), on the intra-op threads (element-wise work on disjoint images: the same
    bits however it is shared out)."""
    n = xp.shape[0]
    if n == 0:  # an empty batch (a replica's share of a last partial batch): nothing to do
        return
    step = items_per_block(xp[0].size, block_elements)
    run_blocks(
        -(-n // step),
        lambda b: block(slice(b * step, min(n, (b + 1) * step))),
        block_flops=_PASSES * min(step, n) * xp[0].size,  # a small batch: one small block
    )


def _first_max_masks(windows, y: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Fill ``masks[k]`` (booleans of ``y``'s shape) with where window offset ``k`` (row-major)
    holds its window's *first* maximum, and return ``masks``.

    The masks are disjoint, so ties (the zeros after a relu) send the gradient to exactly one
    input, as TF's MaxPoolGrad does; a window holding a NaN (its maximum is NaN) has none.
    """
    taken = None
    last = len(windows) - 1
    for k, window in enumerate(windows):
        hit = np.equal(window, y, out=masks[k])
        if taken is None:
            if k < last:
                taken = hit.copy()
        else:
            np.greater(hit, taken, out=hit)  # hit and not taken
            if k < last:
                taken |= hit
    return masks


def _max_backward(g: np.ndarray, y: np.ndarray, x_shape: tuple, saved, h: Axis, w: Axis):
    """Route each output's gradient to the first maximum of its window (row-major), into an
    input gradient of ``x_shape``."""
    offsets = list(_offsets(h, w))
    if _non_overlapping(h, w):
        # Every input lies in at most one window: each offset's share is the gradient times
        # its 0/1 mask (so a non-finite gradient also reaches the window's other inputs as
        # NaN), copied back from window-major order; only the ragged edge that no window
        # covers is zeroed.
        masks = saved  # kept by the forward: it ran while a tape could record it
        dx = np.empty(x_shape, dtype=g.dtype)

        def block(images: slice) -> None:
            part = dx[images]
            part[:, h.out * h.k :] = 0
            part[:, : h.out * h.k, w.out * w.k :] = 0
            n, c = part.shape[0], part.shape[3]
            shares = np.empty((len(offsets), n, h.out, w.out, c), dtype=g.dtype)
            for share, mask in zip(shares, masks[:, images], strict=True):
                np.multiply(g[images], mask, out=share)
            window_major = shares.reshape(h.k, w.k, n, h.out, w.out, c)
            np.copyto(_blocks(part, h, w), window_major.transpose(2, 3, 0, 4, 1, 5))

        _by_images(dx, block, _WINDOW_MAJOR_BLOCK_ELEMENTS)
        return dx
    xp = saved
    dxp = np.zeros(xp.shape, dtype=g.dtype)

    def overlapping_block(images: slice) -> None:
        part = dxp[images]
        windows = [xp[images][offset_slices(i, j, h, w)] for i, j in offsets]
        masks = np.empty((len(offsets),) + y[images].shape, dtype=bool)
        for (i, j), hit in zip(offsets, _first_max_masks(windows, y[images], masks), strict=True):
            part[offset_slices(i, j, h, w)] += np.where(hit, g[images], 0)

    _by_images(xp, overlapping_block, _BLOCK_ELEMENTS)
    return _crop(dxp, h, w)


def _counts(h: Axis, w: Axis, dtype) -> np.ndarray | float:
    """How many real (unpadded) inputs each output window covers: [1, Ho, Wo, 1] or a number."""
    if not (h.before or h.after or w.before or w.after):
        return float(h.k * w.k)

    def per_axis(a: Axis) -> np.ndarray:
        start = np.arange(a.out) * a.stride - a.before
        return np.minimum(start + a.k, a.size) - np.maximum(start, 0)

    return np.multiply.outer(per_axis(h), per_axis(w)).astype(dtype)[None, :, :, None]


def _avg_forward(xv: np.ndarray, h: Axis, w: Axis) -> np.ndarray:
    xp = pad_hw(xv, h, w, 0)
    total = None
    for i, j in _offsets(h, w):
        window = xp[offset_slices(i, j, h, w)]
        total = window.copy() if total is None else np.add(total, window, out=total)
    return total / _counts(h, w, xv.dtype)


def _avg_backward(g: np.ndarray, h: Axis, w: Axis) -> np.ndarray:
    share = (g / _counts(h, w, g.dtype)).astype(g.dtype, copy=False)
    n, c = g.shape[0], g.shape[3]
    dxp = np.zeros((n, h.padded, w.padded, c), dtype=g.dtype)
    if _non_overlapping(h, w):
        _blocks(dxp, h, w)[...] = share[:, :, None, :, None, :]
        return dxp
    for i, j in _offsets(h, w):
        dxp[offset_slices(i, j, h, w)] += share
    return _crop(dxp, h, w)


def _pool(op: str, value, ksize, strides, padding, data_format: str, kind: str) -> Tensor:
    if data_format not in _FORMATS:
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}.")
    (x,) = as_tensors(op, value)
    xv = x._value
    if xv.ndim != 4:
        raise errors.InvalidArgumentError(
            f"{op}: input must be 4-dimensional [batch, height, width, channels], got shape "
            f"{list(xv.shape)}."
        )
    if kind == "avg" and not x.dtype.is_floating:
        raise errors.InvalidArgumentError(
            f"{op} needs a float input (half, float, double), got {x.dtype.name}; tf.cast it."
        )
    if x.dtype.is_bool:
        raise errors.InvalidArgumentError(f"{op} does not support dtype bool.")
    nchw = data_format == "NCHW"
    x4 = xv.transpose(0, 2, 3, 1) if nchw else xv
    kernel = normalize_pair(ksize, "ksize", data_format)
    stride_hw = normalize_pair(strides, "strides", data_format)
    h, w = resolve_padding(
        padding, x4.shape[1:3], kernel, stride_hw, data_format=data_format, allow_explicit=False
    )
    if kind == "max":
        y4, saved = _max_forward(x4, h, w, masks_wanted=bool(state.tapes))
        x_shape = x4.shape  # the backward needs the input's shape, not the input
    else:
        y4 = _avg_forward(x4, h, w)
    yv = np.ascontiguousarray(y4.transpose(0, 3, 1, 2) if nchw else y4)
    out = make_tensor(yv, x.dtype)

    def grad(g: np.ndarray) -> np.ndarray:
        g4 = g.transpose(0, 2, 3, 1) if nchw else g
        if kind == "max":
            dx4 = _max_backward(g4, y4, x_shape, saved, h, w)
        else:
            dx4 = _avg_backward(g4, h, w)
        return dx4.transpose(0, 3, 1, 2) if nchw else dx4

    record(op, [x], [out], [grad])
    return out


def max_pool2d(input, ksize, strides, padding, data_format: str = "NHWC", name=None) -> Tensor:
    """The maximum of each ``ksize`` window (``tf.nn.max_pool2d``).

    Args:
        input: a 4-D tensor, NHWC (default) or NCHW.
        ksize: window size: an int or a list of 1, 2 or 4 ints.
        strides: window step, same forms.
        padding: ``"VALID"`` or ``"SAME"``.
        data_format: ``"NHWC"`` or ``"NCHW"``.

    Raises:
        InvalidArgumentError: an input that is not 4-D, a bad padding, or a window larger
            than the input under ``"VALID"``.
        ValueError: ``ksize``/``strides`` of a bad length.
    """
    return _pool("MaxPool", input, ksize, strides, padding, data_format, "max")


def avg_pool2d(input, ksize, strides, padding, data_format: str = "NHWC", name=None) -> Tensor:
    """The mean of each ``ksize`` window, padding not counted (``tf.nn.avg_pool2d``).

    Raises:
        InvalidArgumentError: as :func:`max_pool2d`, and for integer inputs.
    """
    return _pool("AvgPool", input, ksize, strides, padding, data_format, "avg")


def _nd_pool(op, fn, input, ksize, strides, padding, data_format) -> Tensor:
    """``tf.nn.max_pool``/``avg_pool``: 4-D inputs pool in 2-D, 3-D inputs in 1-D."""
    (x,) = as_tensors(op, input)
    rank = x._value.ndim
    if rank == 4:
        return fn(x, ksize, strides, padding, data_format or "NHWC")
    if rank != 3:
        raise errors.UnimplementedError(
            f"simdist's {op} supports 3-D (1-D pooling) and 4-D (2-D pooling) inputs, got "
            f"rank {rank}."
        )
    fmt = data_format or "NWC"
    if fmt not in ("NWC", "NCW"):
        raise ValueError(f"data_format for a 3-D input must be 'NWC' or 'NCW', got {fmt!r}.")
    k = _one_d(ksize, "ksize", fmt)
    s = _one_d(strides, "strides", fmt)
    axis = 2 if fmt == "NCW" else 1  # a height axis of 1 in front of the width axis
    shape3 = x._value.shape
    x4 = _reshape(x, shape3[:axis] + (1,) + shape3[axis:])
    y4 = fn(x4, (1, k), (1, s), padding, "NCHW" if fmt == "NCW" else "NHWC")
    return _reshape(y4, y4._value.shape[:axis] + y4._value.shape[axis + 1 :])


def _reshape(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    out = make_tensor(x._value.reshape(shape), x.dtype)
    old = x._value.shape
    record("Reshape", [x], [out], [lambda g: g.reshape(old)])
    return out


def _one_d(value, name: str, fmt: str) -> int:
    values = [int(v) for v in np.asarray(value).reshape(-1)]
    if len(values) == 1:
        return values[0]
    if len(values) == 3:
        return values[2] if fmt == "NCW" else values[1]
    raise ValueError(f"{name} should be of length 1 or 3 for 1-D pooling, got {values}.")


def max_pool(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:
    """``tf.nn.max_pool``: 2-D max pooling of 4-D inputs, 1-D of 3-D inputs."""
    return _nd_pool("MaxPool", max_pool2d, input, ksize, strides, padding, data_format)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:
    """``tf.nn.avg_pool``: 2-D average pooling of 4-D inputs, 1-D of 3-D inputs."""
    return _nd_pool("AvgPool", avg_pool2d, input, ksize, strides, padding, data_format)
