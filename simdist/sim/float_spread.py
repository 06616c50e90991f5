"""How far apart floating arrays are: absolute, relative and in units in the last place.

Ulps are counted on the bit patterns: a float's bits, read as a sign-magnitude integer,
are mapped to a signed integer that is monotone in the float's value (``-0.0`` and
``+0.0`` both map to 0), so the number of representable floats between ``a`` and ``b`` is
the difference of their images. Two adjacent floats are 1 ulp apart, ``-tiny`` and
``+tiny`` (the smallest subnormals) are 2 apart, ``inf`` is 1 past the largest finite
float. float16, float32 and float64 are counted in their own format.

>>> import numpy as np
>>> one = np.float32(1)
>>> int(ulp_distance(one, np.nextafter(one, np.float32(2))))
1
>>> int(ulp_distance(np.float32(-0.0), np.float32(0.0)))
0
>>> s = spread([np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0000002], np.float32)])
>>> int(s.max_ulps), s.max_abs > 0
(1, True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

__all__ = ["Spread", "ordinal", "ulp_distance", "spread"]

_INTS = {2: np.int16, 4: np.int32, 8: np.int64}


def _floats(value) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind != "f" or array.dtype.itemsize not in _INTS:
        raise TypeError(f"ulps are counted on float16/32/64 arrays, got dtype {array.dtype}")
    if np.isnan(array).any():
        raise ValueError("ulps are not defined for NaN; the arrays hold NaN")
    return array


def ordinal(value) -> np.ndarray:
    """Each float's place in the ordered set of its format's floats, as int64.

    Raises:
        TypeError: not a float16/32/64 array.
        ValueError: a NaN (it has no place).
    """
    array = _floats(value)
    bits = array.view(_INTS[array.dtype.itemsize]).astype(np.int64)  # sign-extended
    magnitude = bits & np.int64(2 ** (8 * array.dtype.itemsize - 1) - 1)
    return np.where(bits < 0, -magnitude, magnitude)


def ulp_distance(a, b) -> np.ndarray:
    """Element-wise count of representable floats from ``a`` to ``b`` (uint64, >= 0).

    ``a`` and ``b`` must have the same float dtype (broadcast shapes).

    Raises:
        TypeError: dtypes differ or are not float16/32/64.
        ValueError: a NaN.
    """
    a, b = _floats(a), _floats(b)
    if a.dtype != b.dtype:
        raise TypeError(f"ulps compare floats of one format, got {a.dtype} and {b.dtype}")
    ord_a, ord_b = ordinal(a), ordinal(b)
    lo = np.asarray(np.minimum(ord_a, ord_b))
    hi = np.asarray(np.maximum(ord_a, ord_b))
    return _width(hi, lo)


def _width(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``hi - lo`` for int64 ordinals ``hi >= lo``, as uint64: the difference can exceed
    int64 (float64 from -max to +max), never uint64, so wrapping arithmetic is exact."""
    with np.errstate(over="ignore"):
        return np.asarray(hi).view(np.uint64) - np.asarray(lo).view(np.uint64)


@dataclasses.dataclass(frozen=True)
class Spread:
    """The spread of several versions of one array, element by element, at its worst.

    Attributes:
        max_abs: the largest ``max - min`` over the versions of one element.
        max_rel: the largest ``(max - min) / max |value|`` (0 where every version is 0).
        max_ulps: the largest ulp distance between two versions of one element.
        differing: how many elements are not bit-identical in every version.
        size: elements per version.
        finite: False when a version holds inf or NaN (then max_ulps counts only
            NaN-free elements, and is -1 if every element has a NaN).
    """

    max_abs: float
    max_rel: float
    max_ulps: int
    differing: int
    size: int
    finite: bool


def spread(versions: Sequence[np.ndarray]) -> Spread:
    """How far apart ``versions`` (the same array from several runs) are.

    Raises:
        ValueError: no versions, or versions of different shapes or dtypes.
    """
    arrays = [np.asarray(v) for v in versions]
    if not arrays:
        raise ValueError("spread needs at least one version of the array")
    first = arrays[0]
    for i, a in enumerate(arrays[1:], start=1):
        if a.shape != first.shape or a.dtype != first.dtype:
            raise ValueError(
                f"version 0 is {first.shape} {first.dtype} but version {i} is {a.shape} "
                f"{a.dtype}; compare the same variable from each run"
            )
    stack = np.stack([a.reshape(-1) for a in arrays]).astype(first.dtype, copy=False)
    if stack.size == 0:
        return Spread(0.0, 0.0, 0, 0, 0, True)
    finite = bool(np.isfinite(stack).all())
    wide = stack.astype(np.float64)
    with np.errstate(invalid="ignore"):
        width = wide.max(axis=0) - wide.min(axis=0)
        scale = np.abs(wide).max(axis=0)
        rel = np.where(scale > 0, width / np.where(scale > 0, scale, 1.0), 0.0)
    bits = stack.view(_INTS[first.dtype.itemsize])
    differing = int((bits != bits[0]).any(axis=0).sum())
    clean = ~np.isnan(stack).any(axis=0)
    if clean.any():
        ords = ordinal(stack[:, clean])
        ulps = int(_width(ords.max(axis=0), ords.min(axis=0)).max())
    else:
        ulps = -1
    return Spread(
        max_abs=float(np.nanmax(width)) if not np.isnan(width).all() else float("nan"),
        max_rel=float(np.nanmax(rel)) if not np.isnan(rel).all() else float("nan"),
        max_ulps=ulps,
        differing=differing,
        size=int(first.size),
        finite=finite,
    )
