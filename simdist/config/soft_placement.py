"""Process-wide execution switches of ``tf.config``: soft placement, op determinism, TF32.

simdist runs every op on the device it is placed on and is deterministic by construction,
so these switches change no result; they are recorded and read back as TF does, so code that
sets them (the TF guides, tests) runs unchanged.
"""

from __future__ import annotations

from simdist.core.context import process_state

__all__ = [
    "get_soft_device_placement",
    "set_soft_device_placement",
    "enable_op_determinism",
    "enable_tensor_float_32_execution",
    "tensor_float_32_execution_enabled",
]

_soft_device_placement = True
_tensor_float_32 = True


def get_soft_device_placement() -> bool:
    """``tf.config.get_soft_device_placement`` (TF's default: True)."""
    return _soft_device_placement


def set_soft_device_placement(enabled: bool) -> None:
    """``tf.config.set_soft_device_placement``: whether ops may fall back to another device."""
    global _soft_device_placement
    _soft_device_placement = bool(enabled)


def enable_op_determinism() -> None:
    """``tf.config.experimental.enable_op_determinism``: simdist is always deterministic
    (same program, same bits), so this only records that the program asked, for the one op
    TF then refuses (``tf.timestamp``)."""
    process_state().op_determinism = True


def enable_tensor_float_32_execution(enabled: bool) -> None:
    """``tf.config.experimental.enable_tensor_float_32_execution``: recorded; simdist's
    float32 matmuls and convolutions always run in full float32 on NumPy."""
    global _tensor_float_32
    _tensor_float_32 = bool(enabled)


def tensor_float_32_execution_enabled() -> bool:
    """``tf.config.experimental.tensor_float_32_execution_enabled`` (TF's default: True)."""
    return _tensor_float_32
