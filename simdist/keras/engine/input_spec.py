"""``tf.keras.layers.InputSpec``: what a layer accepts, checked on every call.

A layer that sets ``self.input_spec`` (one spec, or a list with one per input) has each
input checked before it builds and calls, as Keras 2 does: its rank (``ndim``, ``min_ndim``,
``max_ndim``), its dtype, the sizes of given ``axes`` (``{-1: 8}``) and its ``shape``
(``None`` entries match anything). A mismatch raises Keras's ``ValueError`` naming the layer,
the input, what was expected and the shape received.
"""

from __future__ import annotations

import numpy as np

from simdist.core import nest

__all__ = ["InputSpec", "assert_input_compatibility"]


class InputSpec:
    """The rank, dtype and sizes a layer's input must have (each ``None``: any)."""

    def __init__(
        self,
        dtype=None,
        shape=None,
        ndim=None,
        max_ndim=None,
        min_ndim=None,
        axes=None,
        allow_last_axis_squeeze=False,
        name=None,
    ) -> None:
        self.dtype = None if dtype is None else getattr(dtype, "name", str(dtype))
        shape = None if shape is None else getattr(shape, "as_list", lambda: shape)()
        self.shape = None if shape is None else tuple(shape)
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.name = name
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = {int(k): v for k, v in (axes or {}).items()}
        except (ValueError, TypeError) as error:
            raise TypeError(
                f"Argument `axes` must be a dict with integer keys. Received: axes={axes}"
            ) from error
        if axes and (self.ndim is not None or self.max_ndim is not None):
            top = (self.ndim if self.ndim is not None else self.max_ndim) - 1
            if max(axes) > top:
                raise ValueError(
                    f"Axis {max(axes)} is greater than the maximum allowed value: {top}"
                )
        self.axes = axes

    def __repr__(self) -> str:
        parts = [
            f"{key}={value}"
            for key, value in (
                ("dtype", self.dtype),
                ("shape", self.shape),
                ("ndim", self.ndim),
                ("max_ndim", self.max_ndim),
                ("min_ndim", self.min_ndim),
                ("axes", self.axes or None),
            )
            if value is not None
        ]
        return f"InputSpec({', '.join(parts)})"

    def get_config(self) -> dict:
        return {
            "dtype": self.dtype,
            "shape": self.shape,
            "ndim": self.ndim,
            "max_ndim": self.max_ndim,
            "min_ndim": self.min_ndim,
            "axes": self.axes,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _incompatible(layer: str, index: int, why: str, shape) -> ValueError:
    return ValueError(
        f'Input {index} of layer "{layer}" is incompatible with the layer: {why}. Full shape '
        f"received: {tuple(shape)}"
    )


def assert_input_compatibility(input_spec, inputs, layer_name: str) -> None:
    """Raise ValueError where ``inputs`` break ``input_spec`` (see the module docstring)."""
    specs = nest.flatten(input_spec)
    flat = nest.flatten(inputs)
    if len(flat) != len(specs):
        raise ValueError(
            f'Layer "{layer_name}" expects {len(specs)} input(s), but it received {len(flat)} '
            f"input tensors. Inputs received: {flat}"
        )
    for index, (x, spec) in enumerate(zip(flat, specs, strict=True)):
        if spec is None:
            continue
        shape = tuple(getattr(x, "shape", np.shape(x)))
        rank = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and rank != spec.ndim:
            why = f"expected ndim={spec.ndim}, found ndim={rank}"
            raise _incompatible(layer_name, index, why, shape)
        if spec.max_ndim is not None and rank > spec.max_ndim:
            why = f"expected max_ndim={spec.max_ndim}, found ndim={rank}"
            raise _incompatible(layer_name, index, why, shape)
        if spec.min_ndim is not None and rank < spec.min_ndim:
            why = f"expected min_ndim={spec.min_ndim}, found ndim={rank}"
            raise _incompatible(layer_name, index, why, shape)
        dtype = getattr(getattr(x, "dtype", None), "name", None)
        if spec.dtype is not None and dtype is not None and dtype != spec.dtype:
            why = f"expected dtype={spec.dtype}, found dtype={dtype}"
            raise _incompatible(layer_name, index, why, shape)
        for axis, value in spec.axes.items():
            if value is None or not -rank <= axis < rank:
                continue
            if shape[axis] not in (value, None):
                why = (
                    f"expected axis {axis} of input shape to have value {value}, but received "
                    f"input with shape {shape}"
                )
                raise ValueError(f'Input {index} of layer "{layer_name}" is incompatible with the '
                                 f"layer: {why}")  # fmt: skip
        if spec.shape is not None and rank == len(spec.shape):
            for want, got in zip(spec.shape, shape, strict=True):
                if want is not None and got is not None and want != got:
                    why = f"expected shape={spec.shape}, found shape={shape}"
                    raise ValueError(f'Input {index} of layer "{layer_name}" is incompatible '
                                     f"with the layer: {why}")  # fmt: skip
