"""Autocast variables: float32 weights that read as the calling layer's compute dtype.

Keras 2's mixed precision keeps a layer's weights in float32 (the policy's variable dtype)
and computes in float16 (its compute dtype). Keras wraps each such weight in an
``AutoCastVariable``; simdist marks the variable itself instead (``variable._autocast =
True``, set by ``Layer.add_weight``), so strategies, optimizers and checkpoints see the one
variable they always see. The rule, as Keras 2's:

* every layer call sets this thread's autocast dtype to that layer's compute dtype for the
  duration of its ``call`` (a nested float32 layer sets float32 again) and restores the
  previous one afterwards (:func:`enter_layer_call` / :func:`exit_layer_call`);
* converting a marked floating variable to a tensor (``tf.matmul(x, kernel)``,
  ``kernel * x``, ``tf.convert_to_tensor(kernel)``) while a different floating autocast
  dtype is set reads the variable and casts the read (:func:`read`); the cast's gradient is
  cast back, so gradients with respect to the variable stay float32;
* outside any layer call nothing is cast: ``layer.kernel`` in a loss function is float32.

A thread-local per replica thread: each replica's layer calls set only their own dtype.
"""

from __future__ import annotations

import threading

from simdist.core import dtypes

__all__ = ["active_dtype", "enter_layer_call", "exit_layer_call", "read"]


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.dtype = None  # the innermost calling layer's compute dtype name, or None


_STATE = _AutocastState()


def active_dtype() -> str | None:
    """The dtype marked variables read as on this thread now (``None``: no layer call)."""
    return _STATE.dtype


def enter_layer_call(compute_dtype: str):
    """Set this thread's autocast dtype for a layer's call; returns what to restore."""
    previous = _STATE.dtype
    _STATE.dtype = compute_dtype
    return previous


def exit_layer_call(previous) -> None:
    """Restore the autocast dtype that :func:`enter_layer_call` returned."""
    _STATE.dtype = previous


def read(variable, dtype=None):
    """``variable`` as a tensor, cast to the autocast dtype when one applies (see above).

    ``dtype``: the dtype a conversion asked for; asking for the autocast dtype (or the
    variable's own) is allowed, as for Keras's AutoCastVariable.

    Raises:
        ValueError: a requested dtype that is neither.
    """
    target = _STATE.dtype
    own = variable.dtype
    if target is None or not own.is_floating or own.name == target:
        return variable._to_tensor(dtype)
    target_dtype = dtypes.as_dtype(target)
    if not target_dtype.is_floating:
        return variable._to_tensor(dtype)
    if dtype is not None and dtypes.as_dtype(dtype) not in (own, target_dtype):
        raise ValueError(
            f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for autocast "
            f"variable {variable.name} of dtype {own.name} (read as {target} in this layer "
            "call); use tf.cast."
        )
    if dtype is not None and dtypes.as_dtype(dtype) == own:
        return variable._to_tensor(dtype)
    from simdist.core.ops import math_ops

    return math_ops.cast(variable._to_tensor(None), target_dtype)
