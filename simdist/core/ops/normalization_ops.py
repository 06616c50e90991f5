"""``tf.nn.batch_normalization`` and ``tf.nn.gelu``, built from the core's ops.

``batch_normalization`` is TF's formula, ``x * inv + (offset - mean * inv)`` with
``inv = rsqrt(variance + variance_epsilon) * scale``; each term is an op of the core, so
the gradients to every input follow from theirs (as TF's do from its ops). ``gelu`` is
``0.5 x (1 + erf(x / sqrt 2))``, or with ``approximate=True`` TF's tanh form
``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
"""

from __future__ import annotations

import math

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops
from simdist.core.ops.nn_ops import tanh
from simdist.core.ops.special_ops import erf
from simdist.core.tensor import Tensor

__all__ = ["batch_normalization", "gelu"]


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None) -> Tensor:
    """``scale * (x - mean) / sqrt(variance + variance_epsilon) + offset``, broadcast;
    ``offset`` and ``scale`` may be None (0 and 1)."""
    x = convert_to_tensor(x)
    inv = math_ops.rsqrt(math_ops.add(variance, variance_epsilon))
    if scale is not None:
        inv = math_ops.multiply(inv, scale)
    shift = math_ops.multiply(mean, inv)
    shift = math_ops.negative(shift) if offset is None else math_ops.subtract(offset, shift)
    return math_ops.add(math_ops.multiply(x, inv), shift)


def gelu(features, approximate=False, name=None) -> Tensor:
    """The Gaussian error linear unit ``x * P(X <= x)`` for a standard normal X.

    Raises:
        ValueError: ``features`` is not a float tensor (as TF's check).
    """
    x = convert_to_tensor(features)
    if not x.dtype.is_floating:
        raise ValueError(
            f"`features.dtype` must be a floating point tensor.Received:features.dtype={x.dtype!r}"
        )
    half_x = math_ops.multiply(x, 0.5)
    if approximate:
        cubic = math_ops.multiply(math_ops.pow(x, 3), 0.044715)
        inner = math_ops.multiply(math_ops.add(x, cubic), math.sqrt(2.0 / math.pi))
        return math_ops.multiply(half_x, math_ops.add(tanh(inner), 1.0))
    return math_ops.multiply(half_x, math_ops.add(erf(math_ops.multiply(x, 1 / math.sqrt(2))), 1.0))
