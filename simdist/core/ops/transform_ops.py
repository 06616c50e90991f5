"""Projective image transforms (TF's ``ImageProjectiveTransformV3``), with their gradient.

A transform row ``[a0, a1, a2, b0, b1, b2, c0, c1]`` maps each *output* pixel ``(x, y)``
(``x`` the column, ``y`` the row) to the *input* point ``((a0 x + a1 y + a2) / k,
(b0 x + b1 y + b2) / k)`` with ``k = c0 x + c1 y + 1``, in float32 (``k == 0`` gives
``fill_value``). Each coordinate is then brought into the image by the fill mode (``len`` the
input's height or width):

* ``reflect`` (``d c b a | a b c d | d c b a``): mirrored about the edge, the edge pixel
  repeated, period ``2 * len``;
* ``wrap`` (``a b c d | a b c d``): taken modulo ``len``;
* ``nearest`` (``a a a a | a b c d | d d d d``): clamped to ``[0, len - 1]``;
* ``constant``: left as it is; a read outside the image gives ``fill_value``.

Then ``nearest`` interpolation reads the pixel at the rounded point (half away from zero);
``bilinear`` mixes the four pixels around it, ``(x1 - x) * p(x0) + (x - x0) * p(x1)`` along
the row, then the same along the column (``x0 = floor(x)``, ``x1 = x0 + 1``), each read
outside the image giving ``fill_value``.

The gradient with respect to the images is TF's registered one: the output gradient
transformed by the *inverse* transforms (same fill mode and interpolation, fill 0) back to
the images' shape. That is not the exact adjoint of the forward map (it would spread each
output gradient over the pixels read, with their weights); simdist keeps TF's, so that
training through an augmentation layer gives TF's numbers. The transforms get no gradient.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["image_projective_transform", "FILL_MODES", "INTERPOLATIONS"]

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("nearest", "bilinear")


def _reflect(coord: np.ndarray, size: int) -> np.ndarray:
    if size <= 1:
        return np.zeros_like(coord)
    period = np.float32(2 * size)
    out = coord.copy()
    low = out < 0
    neg = out[low]
    neg = np.where(neg < -period, period * np.trunc(-neg / period) + neg, neg)
    out[low] = np.where(neg < -size, neg + period, -neg - 1)
    high = coord > size - 1
    pos = out[high]
    pos = pos - period * np.trunc(pos / period)
    out[high] = np.where(pos >= size, period - pos - 1, pos)
    return np.clip(out, 0, size - 1)


def _wrap(coord: np.ndarray, size: int) -> np.ndarray:
    if size <= 1:
        return np.zeros_like(coord)
    # TF's kernel counts the turns by ``len - 1`` and moves by ``len`` (then clamps)
    turns, span = np.float32(size - 1), np.float32(size)
    out = coord.copy()
    low = out < 0
    out[low] = out[low] + span * (np.trunc(-out[low] / turns) + 1)
    high = coord > size - 1
    out[high] = out[high] - span * np.trunc(out[high] / turns)
    return np.clip(out, 0, size - 1)


def _map(coord: np.ndarray, size: int, fill_mode: str) -> np.ndarray:
    if fill_mode == "reflect":
        return _reflect(coord, size)
    if fill_mode == "wrap":
        return _wrap(coord, size)
    if fill_mode == "nearest":
        return np.clip(coord, 0, size - 1)
    return coord  # constant


def _taps(transform, out_h: int, out_w: int, in_h: int, in_w: int, fill_mode, interpolation):
    """Per output pixel: the input pixels it reads ``(rows, cols, weights, inside)`` (each
    ``[taps, out_h, out_w]``) and whether the pixel is ``fill_value`` outright (``k == 0``)."""
    t = np.asarray(transform, np.float32)
    ys, xs = np.meshgrid(
        np.arange(out_h, dtype=np.float32), np.arange(out_w, dtype=np.float32), indexing="ij"
    )
    k = t[6] * xs + t[7] * ys + np.float32(1)
    degenerate = k == 0
    safe = np.where(degenerate, np.float32(1), k)
    in_x = _map((t[0] * xs + t[1] * ys + t[2]) / safe, in_w, fill_mode)
    in_y = _map((t[3] * xs + t[4] * ys + t[5]) / safe, in_h, fill_mode)
    if interpolation == "nearest":
        rows = np.sign(in_y) * np.floor(np.abs(in_y) + np.float32(0.5))
        cols = np.sign(in_x) * np.floor(np.abs(in_x) + np.float32(0.5))
        rows, cols = rows[None], cols[None]
        weights = np.ones_like(rows)
    else:
        y0, x0 = np.floor(in_y), np.floor(in_x)
        y1, x1 = y0 + 1, x0 + 1
        rows = np.stack([y0, y0, y1, y1])
        cols = np.stack([x0, x1, x0, x1])
        wy0, wy1, wx0, wx1 = y1 - in_y, in_y - y0, x1 - in_x, in_x - x0
        weights = np.stack([wy0 * wx0, wy0 * wx1, wy1 * wx0, wy1 * wx1])
    inside = (rows >= 0) & (rows <= in_h - 1) & (cols >= 0) & (cols <= in_w - 1)
    rows = np.where(inside, rows, 0).astype(np.intp)
    cols = np.where(inside, cols, 0).astype(np.intp)
    return rows, cols, weights.astype(np.float32), inside, degenerate


def _inverse_transforms(rows: np.ndarray) -> np.ndarray:
    """Each 8-entry transform's inverse, as 8 entries (the 3x3 matrix's, scaled to end in 1)."""
    full = np.concatenate([rows.astype(np.float64), np.ones((len(rows), 1))], axis=1)
    inverse = np.linalg.inv(full.reshape(-1, 3, 3)).reshape(-1, 9)
    return (inverse / inverse[:, 8:9])[:, :8].astype(np.float32)


def image_projective_transform(
    images, transforms, output_shape=None, fill_mode="reflect", interpolation="bilinear",
    fill_value=0.0,
) -> Tensor:  # fmt: skip
    """Transform each of ``images`` ``[batch, height, width, channels]`` by its row of
    ``transforms`` ``[batch or 1, 8]`` into ``output_shape`` ``(height, width)`` (the
    input's by default), as the module docstring says.

    Raises:
        InvalidArgumentError: images that are not 4-D, transforms not ``[1 or batch, 8]``.
        NotImplementedError: an unknown fill mode or interpolation (Keras 2's message).
    """
    x = convert_to_tensor(images)
    fill_mode, interpolation = str(fill_mode).lower(), str(interpolation).lower()
    if fill_mode not in FILL_MODES:
        raise NotImplementedError(
            f"Unknown `fill_mode` {fill_mode}. Only `reflect`, `wrap`, `constant` and "
            "`nearest` are supported."
        )
    if interpolation not in INTERPOLATIONS:
        raise NotImplementedError(
            f"Unknown `interpolation` {interpolation}. Only `nearest` and `bilinear` are supported."
        )
    value = x._value
    if value.ndim != 4:
        raise errors.InvalidArgumentError(
            f"Input images must have rank 4, got shape {list(value.shape)}."
        )
    rows_of = np.asarray(convert_to_tensor(transforms)._value, np.float32)
    batch, in_h, in_w, _ = value.shape
    if rows_of.ndim != 2 or rows_of.shape[1] != 8 or rows_of.shape[0] not in (1, batch):
        raise errors.InvalidArgumentError(
            f"Input transform should be num_images x 8 or 1 x 8, got {list(rows_of.shape)} "
            f"for {batch} images."
        )
    out_h, out_w = (in_h, in_w) if output_shape is None else (int(d) for d in output_shape)
    fill = np.asarray(fill_value, value.dtype)
    out = np.empty((batch, out_h, out_w, value.shape[3]), value.dtype)
    for b in range(batch):
        plan = _taps(rows_of[b if rows_of.shape[0] > 1 else 0], out_h, out_w, in_h, in_w,
                     fill_mode, interpolation)  # fmt: skip
        rows, cols, weights, inside, degenerate = plan
        picked = value[b][rows, cols]  # [taps, out_h, out_w, channels]
        picked = np.where(inside[..., None], picked, fill)
        mixed = np.sum(weights[..., None] * picked, axis=0, dtype=np.float32)
        out[b] = np.where(degenerate[..., None], fill, mixed).astype(value.dtype)
    result = make_tensor(out, x.dtype)

    def grad(g):  # TF's registered gradient: g warped back by the inverse transforms
        inverse = _inverse_transforms(rows_of)
        back = image_projective_transform(
            make_tensor(np.asarray(g, value.dtype), x.dtype), inverse, (in_h, in_w),
            fill_mode, interpolation, 0.0,
        )  # fmt: skip
        return back._value

    if x.dtype.is_floating:
        record("ImageProjectiveTransformV3", [x], [result], [grad])
    return result
