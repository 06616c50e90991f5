"""Input and argument checks shared by the layers (Keras's InputSpec messages)."""

from __future__ import annotations

from simdist.core.tensor import Tensor

__all__ = ["check_input", "positive_int", "int_pair", "padding_name", "static_shape"]


def static_shape(inputs) -> tuple:
    """``tuple(inputs.shape)``; for a tensor read straight from its array (no TensorShape)."""
    return inputs._value.shape if type(inputs) is Tensor else tuple(inputs.shape)


def check_input(layer, inputs, min_ndim=None, ndim=None, axes=None) -> None:
    """Raise ValueError when ``inputs`` does not fit what ``layer`` was built for."""
    shape = static_shape(inputs)
    if ndim is not None and len(shape) != ndim:
        raise ValueError(
            f'Input 0 of layer "{layer.name}" is incompatible with the layer: expected '
            f"ndim={ndim}, found ndim={len(shape)}. Full shape received: {shape}"
        )
    if min_ndim is not None and len(shape) < min_ndim:
        raise ValueError(
            f'Input 0 of layer "{layer.name}" is incompatible with the layer: expected '
            f"min_ndim={min_ndim}, found ndim={len(shape)}. Full shape received: {shape}"
        )
    for axis, value in (axes or {}).items():
        if value is not None and shape[axis] not in (value, None):
            raise ValueError(
                f'Input 0 of layer "{layer.name}" is incompatible with the layer: expected '
                f"axis {axis} of input shape to have value {value}, but received input with "
                f"shape {shape}"
            )


def positive_int(value, name: str) -> int:
    """``value`` as an int; ValueError unless it is a positive integer."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number <= 0 or number != value:
        raise ValueError(
            f"Received an invalid value for `{name}`, expected a positive integer. "
            f"Received: {name}={value}"
        )
    return number


def int_pair(value, name: str) -> tuple[int, int]:
    """An int or a pair of ints as a pair of positive ints (Keras's normalize_tuple)."""
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, int) and v > 0 for v in pair):
        raise ValueError(
            f"The `{name}` argument must be a tuple of 2 positive integers. Received: "
            f"{name}={value!r}"
        )
    return pair


def padding_name(value: str) -> str:
    """``'valid'``/``'same'`` (any case) -> the op's ``'VALID'``/``'SAME'``."""
    padding = str(value).lower()
    if padding not in ("valid", "same"):
        raise ValueError(
            f"The `padding` argument must be 'valid' or 'same'. Received: padding={value!r}"
        )
    return padding.upper()
