"""``tf.image.resize`` by bilinear and nearest-neighbour sampling, with their gradients.

TF 2's ``tf.image.resize`` samples with half-pixel centres (``ResizeBilinear`` and
``ResizeNearestNeighbor`` with ``half_pixel_centers=True``, ``align_corners=False``); these
kernels follow TF's CPU kernels (``resize_bilinear_op.cc``, ``resize_nearest_neighbor_op.cc``)
step by step, in float32:

* bilinear: output pixel ``o`` reads input coordinate ``(o + 0.5) * in/out - 0.5``; its
  two neighbours are ``max(floor(c), 0)`` and ``min(ceil(c), in - 1)`` with weight
  ``c - floor(c)``; rows are interpolated as ``top + (bottom - top) * y_lerp`` after columns
  as ``left + (right - left) * x_lerp``. The output is float32 whatever the input dtype.
* nearest: output pixel ``o`` takes input ``min(floor((o + 0.5) * in/out), in - 1)``; the
  output keeps the input dtype.

The gradients spread each output's gradient back over the input pixels it read (TF's
``ResizeBilinearGrad`` and ``ResizeNearestNeighborGrad``), summed with ``np.add.at``.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["resize_bilinear", "resize_nearest"]


def _scale(in_size: int, out_size: int) -> np.float32:
    return np.float32(in_size) / np.float32(out_size)


def _linear_weights(in_size: int, out_size: int):
    """Per output index: (lower input index, upper input index, weight of the upper)."""
    coords = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * _scale(
        in_size, out_size
    ) - np.float32(0.5)
    floor = np.floor(coords)
    lower = np.maximum(floor, 0).astype(np.intp)
    upper = np.minimum(np.ceil(coords), in_size - 1).astype(np.intp)
    return lower, upper, (coords - floor).astype(np.float32)


def _nearest_index(in_size: int, out_size: int) -> np.ndarray:
    coords = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * _scale(in_size, out_size)
    return np.minimum(np.floor(coords).astype(np.intp), in_size - 1)


def _check(op: str, images, size) -> tuple[Tensor, int, int]:
    x = convert_to_tensor(images)
    if x._value.ndim != 4:
        raise errors.InvalidArgumentError(
            f"{op}: input must be 4-dimensional [batch, height, width, channels], got shape "
            f"{list(x._value.shape)}."
        )
    if x._dtype.is_bool or x._dtype == dtypes.string:
        raise errors.InvalidArgumentError(f"{op} does not support dtype {x._dtype.name}.")
    hw = np.asarray(convert_to_tensor(size)._value).reshape(-1)
    if hw.shape != (2,) or hw.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(
            f"{op}: size must be 2 integers [new_height, new_width], got {size!r}."
        )
    out_h, out_w = int(hw[0]), int(hw[1])
    if out_h <= 0 or out_w <= 0:
        raise errors.InvalidArgumentError(
            f"{op}: the output size must be positive, got [{out_h}, {out_w}]."
        )
    if 0 in x._value.shape[1:3]:
        raise errors.InvalidArgumentError(f"{op}: the input images are empty.")
    return x, out_h, out_w


def resize_bilinear(images, size) -> Tensor:
    """Bilinear resize of ``[batch, height, width, channels]`` images to ``size`` (float32)."""
    x, out_h, out_w = _check("ResizeBilinear", images, size)
    xv = x._value.astype(np.float32, copy=False)
    in_h, in_w = xv.shape[1:3]
    y0, y1, wy = _linear_weights(in_h, out_h)
    x0, x1, wx = _linear_weights(in_w, out_w)
    wx_ = wx[None, None, :, None]
    top_left, top_right = xv[:, y0][:, :, x0], xv[:, y0][:, :, x1]
    bottom_left, bottom_right = xv[:, y1][:, :, x0], xv[:, y1][:, :, x1]
    top = top_left + (top_right - top_left) * wx_
    bottom = bottom_left + (bottom_right - bottom_left) * wx_
    out = make_tensor(top + (bottom - top) * wy[None, :, None, None], dtypes.float32)
    if not x._dtype.is_floating:
        return out  # TF: no gradient into integer images

    def grad(g):
        g = g.astype(np.float32, copy=False)
        dx = np.zeros(xv.shape, np.float32)
        g_top = g * (np.float32(1) - wy)[None, :, None, None]
        g_bottom = g * wy[None, :, None, None]
        for rows, part in ((y0, g_top), (y1, g_bottom)):
            left = part * (np.float32(1) - wx)[None, None, :, None]
            right = part * wx_
            np.add.at(dx, (slice(None), rows[:, None], x0[None, :]), left)
            np.add.at(dx, (slice(None), rows[:, None], x1[None, :]), right)
        return dx.astype(x._value.dtype, copy=False)

    record("ResizeBilinear", [x], [out], [grad])
    return out


def resize_nearest(images, size) -> Tensor:
    """Nearest-neighbour resize of ``[batch, height, width, channels]`` images to ``size``
    (the input dtype)."""
    x, out_h, out_w = _check("ResizeNearestNeighbor", images, size)
    xv = x._value
    in_h, in_w = xv.shape[1:3]
    rows, cols = _nearest_index(in_h, out_h), _nearest_index(in_w, out_w)
    out = make_tensor(xv[:, rows][:, :, cols], x._dtype)
    if not x._dtype.is_floating:
        return out

    def grad(g):
        dx = np.zeros(xv.shape, g.dtype)
        np.add.at(dx, (slice(None), rows[:, None], cols[None, :]), g)
        return dx

    record("ResizeNearestNeighbor", [x], [out], [grad])
    return out
