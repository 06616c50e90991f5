"""Sliding-window geometry shared by convolution and pooling: sizes, strides, TF's padding.

TF's rules: a stride (or kernel size, or dilation) is an int, or a list of 1, 2 or 4 ints
(4 ints in the tensor's layout, whose batch and channel entries must be 1). ``"VALID"``
keeps only whole windows; ``"SAME"`` gives ``ceil(in / stride)`` outputs and pads
``max((out - 1) * stride + effective_k - in, 0)`` in total, the smaller half *before* (top,
left) and the larger half after. Explicit padding is a list of 4 ``[before, after]`` pairs.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from simdist import errors

__all__ = ["Axis", "normalize_pair", "resolve_padding", "offset_slices", "pad_hw"]


@dataclass(frozen=True)
class Axis:
    """The geometry of one spatial axis: input size, window, stride, dilation, padding."""

    size: int
    k: int
    stride: int
    dilation: int
    before: int
    after: int
    out: int

    @property
    def padded(self) -> int:
        return self.size + self.before + self.after


def normalize_pair(value, name: str, data_format: str = "NHWC") -> tuple[int, int]:
    """An int or a list of 1, 2 or 4 ints, as ``(height, width)`` values.

    Raises:
        ValueError: a list of another length, or a value below 1.
        UnimplementedError: a 4-list with a batch or channel entry other than 1.
    """
    # The common cases (a Keras layer's int or (height, width) tuple): what the rest gives.
    if type(value) is int and value >= 1:
        return (value, value)
    if type(value) is tuple and len(value) == 2 and all(type(v) is int and v >= 1 for v in value):
        return value
    if isinstance(value, (int, np.integer)):
        values = [int(value)]
    else:
        values = [int(v) for v in np.asarray(value).reshape(-1)]
    if len(values) == 1:
        pair = (values[0], values[0])
    elif len(values) == 2:
        pair = (values[0], values[1])
    elif len(values) == 4:
        channels_first = data_format.startswith("NC")
        batch, chan = values[0], (values[1] if channels_first else values[3])
        if batch != 1 or chan != 1:
            raise errors.UnimplementedError(
                f"{name}={values}: windows across the batch and depth dimensions are not "
                f"supported; the batch and channel entries of {name} must be 1."
            )
        pair = (values[2], values[3]) if channels_first else (values[1], values[2])
    else:
        raise ValueError(
            f"{name} should be of length 1, 2 or 4. Received: {name}={values} of length "
            f"{len(values)}"
        )
    if min(pair) < 1:
        raise ValueError(f"{name} must be positive integers, got {values}.")
    return pair


def _explicit_pairs(padding, data_format: str) -> list[tuple[int, int]]:
    pairs = np.asarray(padding)
    if pairs.shape != (4, 2) or pairs.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(
            f"explicit padding must be 4 [before, after] integer pairs, one per dimension, "
            f"got {padding!r}."
        )
    spatial = (2, 3) if data_format.startswith("NC") else (1, 2)
    others = [i for i in range(4) if i not in spatial]
    if pairs.min() < 0 or any(pairs[i].any() for i in others):
        raise errors.InvalidArgumentError(
            f"explicit padding {pairs.tolist()} must be non-negative, with [0, 0] for the "
            "batch and channel dimensions."
        )
    return [(int(pairs[i][0]), int(pairs[i][1])) for i in spatial]


def resolve_padding(
    padding,
    sizes: tuple[int, int],
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilations: tuple[int, int] = (1, 1),
    data_format: str = "NHWC",
    allow_explicit: bool = True,
) -> tuple[Axis, Axis]:
    """The height and width geometry for ``padding`` ("SAME", "VALID" or explicit pairs).

    Raises:
        InvalidArgumentError: an unknown padding, or a window larger than the padded input.
    """
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise errors.InvalidArgumentError(
                f'padding must be "SAME" or "VALID" (upper case), got {padding!r}.'
            )
        # Every step of a training loop asks the same: the named cases are remembered.
        return _named_padding(
            padding, tuple(sizes), tuple(kernel), tuple(strides), tuple(dilations)
        )
    if allow_explicit:
        explicit = _explicit_pairs(padding, data_format)
    else:
        raise errors.InvalidArgumentError(f'padding must be "SAME" or "VALID", got {padding!r}.')
    return _axes(padding, sizes, kernel, strides, dilations, explicit)


@functools.lru_cache(maxsize=256)
def _named_padding(padding: str, sizes, kernel, strides, dilations) -> tuple[Axis, Axis]:
    """``resolve_padding`` for "SAME"/"VALID" (its inputs are ints: cacheable, and the
    frozen ``Axis`` results are safe to share)."""
    return _axes(padding, sizes, kernel, strides, dilations, None)


def _axes(padding, sizes, kernel, strides, dilations, explicit) -> tuple[Axis, Axis]:
    axes = []
    for i in range(2):
        size, k, s, d = sizes[i], kernel[i], strides[i], dilations[i]
        effective = (k - 1) * d + 1
        if padding == "SAME":
            out = math.ceil(size / s)
            total = max((out - 1) * s + effective - size, 0)
            before, after = total // 2, total - total // 2
        else:
            before, after = (0, 0) if explicit is None else explicit[i]
            padded = size + before + after
            if padded < effective:
                raise errors.InvalidArgumentError(
                    f"Computed output size would be negative: {(padded - effective) // s + 1}"
                    f" [input_size: {size}, effective_filter_size: {effective}, stride: {s}]"
                    "; use a smaller window or padding='SAME'."
                )
            out = (padded - effective) // s + 1
        axes.append(Axis(size, k, s, d, before, after, out))
    return axes[0], axes[1]


def offset_slices(i: int, j: int, h: Axis, w: Axis) -> tuple[slice, slice, slice, slice]:
    """The NHWC slices of the padded input that kernel offset ``(i, j)`` reads."""
    top, left = i * h.dilation, j * w.dilation
    return (
        slice(None),
        slice(top, top + h.stride * (h.out - 1) + 1, h.stride),
        slice(left, left + w.stride * (w.out - 1) + 1, w.stride),
        slice(None),
    )


def pad_hw(x: np.ndarray, h: Axis, w: Axis, fill=0) -> np.ndarray:
    """``x`` (NHWC) padded by the axes' before/after amounts with ``fill``."""
    if not (h.before or h.after or w.before or w.after):
        return x
    n, _, _, c = x.shape
    out = np.full((n, h.padded, w.padded, c), fill, dtype=x.dtype)
    out[:, h.before : h.before + h.size, w.before : w.before + w.size, :] = x
    return out
