"""Gathering per-replica values: concatenation in replica order, with TF's shape rules.

Every component must have rank >= 1 (as the MultiWorkerMirroredStrategy API page says: use
``tf.expand_dims`` first) and the same shape in every dimension but ``axis``; for TPUs,
exactly the same shape.
"""

from __future__ import annotations

import numpy as np

from simdist import errors

__all__ = ["concat_components"]


def concat_components(arrays: list[np.ndarray], axis: int, same_shape: bool = False) -> np.ndarray:
    """Concatenate replica components along ``axis`` (replica order).

    Raises:
        InvalidArgumentError: a rank-0 component, an axis out of range, or shapes that differ
            in a dimension other than ``axis`` (any dimension, with ``same_shape``).
    """
    first = arrays[0]
    if first.ndim == 0:
        raise errors.InvalidArgumentError(
            "gather/all_gather needs components of rank >= 1, got scalars; add an axis with "
            "tf.expand_dims(value, 0) before gathering."
        )
    if not -first.ndim <= axis < first.ndim:
        raise errors.InvalidArgumentError(
            f"gather axis {axis} is out of range for components of rank {first.ndim}; use an "
            f"axis in [{-first.ndim}, {first.ndim})."
        )
    axis %= first.ndim
    for r, a in enumerate(arrays[1:], start=1):
        if a.ndim != first.ndim or a.dtype != first.dtype:
            raise errors.InvalidArgumentError(
                f"Cannot gather: replica 0 has shape {first.shape} {first.dtype}, replica {r} "
                f"has shape {a.shape} {a.dtype}; ranks and dtypes must match."
            )
        off_axis = [d for i, d in enumerate(a.shape) if i != axis or same_shape]
        expected = [d for i, d in enumerate(first.shape) if i != axis or same_shape]
        if off_axis != expected:
            rule = "identical shapes" if same_shape else f"equal shapes except along axis {axis}"
            raise errors.InvalidArgumentError(
                f"Cannot gather along axis {axis}: replica 0 has shape {first.shape}, replica "
                f"{r} has shape {a.shape}; gather needs {rule}."
            )
    return np.concatenate(arrays, axis=axis)
