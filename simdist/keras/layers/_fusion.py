"""Which layer activations the fused ops (``core.ops.fused_ops``) can run inside themselves."""

from __future__ import annotations

from collections.abc import Callable

from simdist.core.ops import nn_ops
from simdist.keras import activations

__all__ = ["NOT_FUSABLE", "fused_activation"]

NOT_FUSABLE = object()


def fused_activation(fn: Callable):
    """``None`` for the identity, ``"relu"`` for a plain relu, else ``NOT_FUSABLE``."""
    if fn is activations.linear:
        return None
    if fn is activations.relu or fn is nn_ops.relu:
        return "relu"
    return NOT_FUSABLE
