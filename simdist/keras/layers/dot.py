"""``Dot``: the batched dot product of two inputs over one axis of each (Keras's
``batch_dot``), optionally of their L2-normalised forms (cosine similarity).

For inputs ``x`` ``[batch, ...]`` and ``y`` ``[batch, ...]`` and axes ``(i, j)`` (a negative
axis counts from each input's end; axis 0, the batch, cannot be contracted), the output has
``x``'s axes without ``i``, then ``y``'s without the batch and ``j``; an output of rank 1
gains a last axis of size 1 (``[batch, 1]``). The Keras mask does not pass.
"""

from __future__ import annotations

import string

from simdist.core.ops import array_ops, einsum_ops
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.layers._checks import static_shape
from simdist.keras.layers.group_normalization import l2_normalize
from simdist.keras.layers.merging import _check_list, _Merge

__all__ = ["Dot", "dot"]


def _axes_of(axes, ranks: tuple[int, int]) -> tuple[int, int]:
    pair = [axes, axes] if isinstance(axes, int) else list(axes)
    return tuple(a % rank if a < 0 else a for a, rank in zip(pair, ranks, strict=True))


class Dot(_Merge):
    """The dot product of two inputs along ``axes`` (see the module docstring).

    Raises:
        TypeError: ``axes`` neither an int nor a list/tuple.
        ValueError: ``axes`` not two ints; at call, not exactly two inputs, the batch axis
            named, or contracted axes of different sizes.
    """

    def __init__(self, axes, normalize=False, **kwargs) -> None:
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError(
                    "Invalid type for argument `axes`: it should be a list or an int. "
                    f"Received: axes={axes}"
                )
            if len(axes) != 2:
                raise ValueError(
                    "Invalid format for argument `axes`: it should contain two elements. "
                    f"Received: axes={axes}"
                )
            if not all(isinstance(a, int) for a in axes):
                raise ValueError(
                    "Invalid format for argument `axes`: list elements should be integers. "
                    f"Received: axes={axes}"
                )
        self.axes = axes if isinstance(axes, int) else list(axes)
        self.normalize = bool(normalize)

    def call(self, inputs) -> Tensor:
        x, y = _check_list(self, inputs, exactly=2)
        xs, ys = static_shape(x), static_shape(y)
        i, j = _axes_of(self.axes, (len(xs), len(ys)))
        if i == 0 or j == 0:
            raise ValueError(
                f"Cannot perform batch_dot over axis 0 (the batch). Received axes={self.axes} "
                f"for inputs of shapes {xs} and {ys}."
            )
        if xs[i] != ys[j]:
            raise ValueError(
                f"Incompatible input shapes: axis values {xs[i]} (at axis {i}) != {ys[j]} (at "
                f"axis {j}). Full input shapes: {xs}, {ys}"
            )
        if self.normalize:
            x, y = l2_normalize(x, i), l2_normalize(y, j)
        letters = iter(string.ascii_letters[2:])
        x_sub = ["a" if k == 0 else "b" if k == i else next(letters) for k in range(len(xs))]
        y_sub = ["a" if k == 0 else "b" if k == j else next(letters) for k in range(len(ys))]
        out_sub = [c for c in x_sub if c != "b"] + [c for c in y_sub[1:] if c != "b"]
        equation = f"{''.join(x_sub)},{''.join(y_sub)}->{''.join(out_sub)}"
        out = einsum_ops.einsum(equation, x, y)
        return array_ops.expand_dims(out, 1) if len(out_sub) == 1 else out

    def compute_output_shape(self, input_shape) -> TensorShape:
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) != 2:
            raise ValueError(
                "A `Dot` layer should be called on a list of 2 inputs. Received: "
                f"input_shape={input_shape}"
            )
        first, second = (as_shape(s).as_list() for s in input_shape)
        i, j = _axes_of(self.axes, (len(first), len(second)))
        first.pop(i)
        second.pop(j)
        second.pop(0)
        out = first + second
        return TensorShape(out + [1] if len(out) == 1 else out)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self) -> dict:
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def dot(inputs, axes, normalize=False, **kwargs) -> Tensor:
    """``Dot(axes, normalize)(inputs)``."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
