"""Norm clipping: ``clip_by_norm``, ``global_norm`` and ``clip_by_global_norm``.

These are TF's own compositions of primitive ops, written with simdist's primitives, so
their gradients come from the tape and match TF's (the global norm is *not* a constant
there: TF does not stop its gradient, and neither does simdist).

* ``clip_by_norm(t, c, axes)``: ``t * c / max(||t||, c)``, the L2 norm over ``axes``
  (all when ``None``), ``c`` raised to 0 if negative; a zero norm is treated safely (no
  NaN, in value or gradient).
* ``global_norm(ts)``: ``sqrt(sum_i sum(t_i ** 2))``, ``None`` entries skipped.
* ``clip_by_global_norm(ts, c)``: every tensor times ``c * min(1 / g, 1 / c)``; when the
  global norm ``g`` is inf or NaN every clipped tensor is NaN, as in TF, so a diverged
  step shows instead of being scaled to zero.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, elementwise_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor

__all__ = ["clip_by_norm", "global_norm", "clip_by_global_norm"]


def _float(op: str, t: Tensor) -> Tensor:
    if not t._dtype.is_floating:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {t._dtype.name} is not in the list of allowed values: "
            f"half, bfloat16, float, double [Op:{op}]; clip float tensors (tf.cast first)."
        )
    return t


def clip_by_norm(t, clip_norm, axes=None, name=None) -> Tensor:
    """``t`` rescaled so that its L2 norm over ``axes`` is at most ``clip_norm``.

    >>> import simdist as tf
    >>> tf.clip_by_norm([3.0, 4.0], 1.0).numpy()
    array([0.6, 0.8], dtype=float32)

    Raises:
        InvalidArgumentError: a non-float ``t``.
    """
    values = _float("Sqrt", convert_to_tensor(t))
    # a negative clip_norm clips to zero, as TF (it takes max(clip_norm, 0) first)
    clip = math_ops.maximum(convert_to_tensor(clip_norm, dtype=values.dtype), 0)
    squares = reduction_ops.reduce_sum(math_ops.multiply(values, values), axes, keepdims=True)
    positive = math_ops.greater(squares, 0)
    safe = array_ops.where(positive, squares, array_ops.ones_like(squares))
    norm = array_ops.where(positive, elementwise_ops.sqrt(safe), squares)
    scaled = math_ops.multiply(values, clip)
    return math_ops.divide(scaled, math_ops.maximum(norm, clip))


def _as_list(t_list, what: str) -> list:
    if isinstance(t_list, (Tensor, str, bytes)) or not isinstance(t_list, Sequence):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


def global_norm(t_list, name=None) -> Tensor:
    """The L2 norm of all the tensors together, ``None`` entries skipped.

    Raises:
        TypeError: ``t_list`` is a single tensor rather than a list.
        InvalidArgumentError: a non-float tensor.
    """
    tensors = [
        _float("L2Loss", convert_to_tensor(t)) for t in _as_list(t_list, "t_list") if t is not None
    ]
    if not tensors:
        raise ValueError("global_norm needs at least one tensor that is not None.")
    squares = [reduction_ops.reduce_sum(math_ops.multiply(t, t)) for t in tensors]
    return elementwise_ops.sqrt(math_ops.add_n(squares))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scale ``t_list`` together so that its global norm is at most ``clip_norm``.

    >>> import simdist as tf
    >>> clipped, norm = tf.clip_by_global_norm([[3.0], [4.0]], 1.0)
    >>> float(norm), clipped[1].numpy()
    (5.0, array([0.8], dtype=float32))

    Args:
        t_list: a list of tensors (``None`` entries pass through as ``None``).
        clip_norm: the largest global norm kept.
        use_norm: a precomputed global norm (else computed from ``t_list``).

    Returns:
        ``(clipped_list, global_norm)``; the norm is the one before clipping.

    Raises:
        TypeError: ``t_list`` is a single tensor rather than a list.
        InvalidArgumentError: a non-float tensor.
    """
    entries = _as_list(t_list, "t_list")
    norm = global_norm(entries) if use_norm is None else convert_to_tensor(use_norm)
    clip = convert_to_tensor(clip_norm, dtype=norm.dtype)
    one = convert_to_tensor(1.0, dtype=norm.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero or inf norm, as TF: quiet
        scale_finite = math_ops.multiply(
            clip, math_ops.minimum(math_ops.divide(one, norm), math_ops.divide(one, clip))
        )
        scale = math_ops.add(scale_finite, math_ops.subtract(norm, norm))  # NaN if inf/NaN
    clipped = [
        None if t is None else math_ops.multiply(convert_to_tensor(t), scale) for t in entries
    ]
    return clipped, norm
