"""Gradient clipping as Keras 2's optimizers do it: clipnorm, global_clipnorm, clipvalue.

At most one rule applies, in this order of precedence (as ``tf_keras``): ``clipnorm``
(each gradient on its own), else ``global_clipnorm`` (all gradients together), else
``clipvalue`` (each element). A value of 0 or ``None`` turns a rule off. The arithmetic is
TensorFlow's, in each gradient's dtype:

* ``tf.clip_by_norm(g, c)``: ``g * c / max(||g||, c)`` (an all-zero ``g`` stays zero);
* ``tf.clip_by_global_norm(gs, c)``: ``n = sqrt(sum ||g||^2)``, each
  ``g * (c * min(1 / n, 1 / c))`` (a non-finite ``n`` makes every gradient NaN, as TF);
* ``tf.clip_by_value(g, -c, c)``.

Under a strategy the optimizer clips the gradients after summing them over replicas (what
``tf_keras``'s ``apply_gradients`` does: aggregate, then clip), so a global norm is the norm
of the global gradient, the same on every replica. With ``skip_gradients_aggregation=True``
each replica's gradients are clipped on that replica (a global norm over that replica's own
gradients), as Keras clips them in the replica context.
"""

from __future__ import annotations

import numpy as np

__all__ = ["clip_gradients", "clip_by_norm", "clip_by_global_norm"]


def _l2_norm(a: np.ndarray):
    squared = np.sum(np.square(a))
    return np.sqrt(squared) if squared > 0 else squared


def clip_by_norm(a: np.ndarray, clip_norm: float) -> np.ndarray:
    """``a`` rescaled so that its L2 norm is at most ``clip_norm`` (``tf.clip_by_norm``)."""
    dtype = a.dtype.type
    return (a * dtype(clip_norm)) / np.maximum(_l2_norm(a), dtype(clip_norm))


def clip_by_global_norm(arrays: list[np.ndarray], clip_norm: float) -> list[np.ndarray]:
    """All ``arrays`` rescaled together so that their global norm is at most ``clip_norm``."""
    if not arrays:
        return []
    dtype = arrays[0].dtype.type
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = np.sqrt(sum(np.sum(np.square(a)) for a in arrays))
        c = dtype(clip_norm)
        scale = c * np.minimum(dtype(1) / dtype(norm), dtype(1) / c)
        if not np.isfinite(norm):
            scale = dtype(np.nan)
    return [a * a.dtype.type(scale) for a in arrays]


def clip_gradients(
    arrays: list[np.ndarray], clipnorm=None, global_clipnorm=None, clipvalue=None
) -> list[np.ndarray]:
    """Apply the one clipping rule that is set (see the module docstring)."""
    if clipnorm:
        return [clip_by_norm(a, clipnorm) for a in arrays]
    if global_clipnorm:
        return clip_by_global_norm(arrays, global_clipnorm)
    if clipvalue:
        return [np.clip(a, -clipvalue, clipvalue).astype(a.dtype, copy=False) for a in arrays]
    return arrays
