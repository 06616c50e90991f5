"""Activation layers: ``LeakyReLU``, ``PReLU``, ``ELU``, ``ThresholdedReLU``, ``Softmax``.

Keras 2's behaviour: each passes the Keras mask through (``Softmax`` also reads it: a
masked position gets ``-1e9`` added to its logit, or, with ``robust_masking``, is replaced by
``-1e9``, so it takes no share of the softmax). ``PReLU``'s ``alpha`` weight has the input's
shape without the batch axis, with each of ``shared_axes`` (counted with the batch axis as 0)
set to 1. ``ReLU`` (``max_value``, ``negative_slope``, ``threshold``) is in ``core``.
"""

from __future__ import annotations

import numbers

import numpy as np

from simdist.core.ops import array_ops, comparison_ops, math_ops, nn_ops, reduction_ops
from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.keras import constraints, initializers, regularizers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input

__all__ = ["LeakyReLU", "PReLU", "ELU", "ThresholdedReLU", "Softmax"]

_MASKED_LOGIT = -1e9  # Keras 2's large negative for float32/float64 (float16: half its min)


def _float_alpha(value, layer: str, name: str = "alpha") -> float:
    if value is None:
        raise ValueError(
            f"The {name} value of a {layer} layer cannot be None, expecting a float. "
            f"Received: {value}"
        )
    if not isinstance(value, numbers.Real):
        raise TypeError(f"The {name} value of a {layer} layer must be a float, got {value!r}.")
    return float(np.float32(value))  # Keras 2 keeps it as floatx (0.3 reads 0.30000001...)


class _ElementwiseActivation(Layer):
    """A weightless element-wise activation: the mask passes, the shape is kept."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


class LeakyReLU(_ElementwiseActivation):
    """``x`` where ``x > 0``, ``alpha * x`` elsewhere (Keras 2's default ``alpha`` is 0.3).

    Raises:
        ValueError: ``alpha=None``.
    """

    def __init__(self, alpha=0.3, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha = _float_alpha(alpha, "Leaky ReLU")

    def call(self, inputs) -> Tensor:
        return nn_ops.leaky_relu(inputs, alpha=self.alpha)

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha}


class ELU(_ElementwiseActivation):
    """``x`` where ``x > 0``, ``alpha * (exp(x) - 1)`` elsewhere.

    Raises:
        ValueError: ``alpha=None``.
    """

    def __init__(self, alpha=1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.alpha = _float_alpha(alpha, "ELU")

    def call(self, inputs) -> Tensor:
        out = nn_ops.elu(inputs)
        if self.alpha == 1.0:
            return out
        positive = comparison_ops.greater(inputs, 0.0)
        return array_ops.where(positive, out, math_ops.multiply(out, self.alpha))

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha}


class ThresholdedReLU(_ElementwiseActivation):
    """``x`` where ``x > theta``, 0 elsewhere (the gradient is 0 below ``theta`` too).

    Raises:
        ValueError: ``theta`` None or negative.
    """

    def __init__(self, theta=1.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.theta = _float_alpha(theta, "Thresholded ReLU", "theta")
        if self.theta < 0:
            raise ValueError(
                f"The theta value of a Thresholded ReLU layer should be >=0. Received: {theta}"
            )

    def call(self, inputs) -> Tensor:
        keep = math_ops.cast(comparison_ops.greater(inputs, self.theta), inputs.dtype)
        return math_ops.multiply(inputs, keep)

    def get_config(self) -> dict:
        return {**super().get_config(), "theta": self.theta}


class Softmax(_ElementwiseActivation):
    """Softmax along ``axis`` (an int, or a list of axes normalised together), with the
    Keras mask (or a ``mask=`` argument) taking masked positions out.

    Raises:
        ValueError: at call, an axis out of range for the input.
    """

    def __init__(self, axis=-1, robust_masking=False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.axis = list(axis) if isinstance(axis, tuple) else axis
        self.robust_masking = bool(robust_masking)

    def call(self, inputs, mask=None) -> Tensor:
        if mask is not None:
            large_negative = _MASKED_LOGIT
            if inputs.dtype.name == "float16":
                large_negative = -65504.0 / 2.0
            if self.robust_masking:
                keep = mask if mask.dtype.name == "bool" else comparison_ops.greater(mask, 0.5)
                inputs = array_ops.where(keep, inputs, large_negative)
            else:
                dropped = math_ops.subtract(1.0, math_ops.cast(mask, inputs.dtype))
                inputs = math_ops.add(inputs, math_ops.multiply(dropped, large_negative))
        axis = self.axis
        if isinstance(axis, list):
            if len(axis) > 1:
                log_total = reduction_ops.reduce_logsumexp(inputs, axis=axis, keepdims=True)
                return math_ops.exp(math_ops.subtract(inputs, log_total))
            axis = axis[0]
        return nn_ops.softmax(inputs, axis=axis)

    def get_config(self) -> dict:
        config = {**super().get_config(), "axis": self.axis}
        if self.robust_masking:
            config["robust_masking"] = True
        return config


class PReLU(Layer):
    """``x`` where ``x > 0``, ``alpha * x`` elsewhere, with ``alpha`` a learned weight.

    Raises:
        ValueError: at build, a shared axis out of range or an unknown unshared dimension;
            at call, an input whose rank or unshared dimensions differ from the built ones.
    """

    def __init__(
        self,
        alpha_initializer="zeros",
        alpha_regularizer=None,
        alpha_constraint=None,
        shared_axes=None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [int(a) for a in shared_axes]
        else:
            self.shared_axes = [int(shared_axes)]
        self._ndim = None
        self._axes: dict[int, int] = {}

    def build(self, input_shape) -> None:
        dims = as_shape(input_shape).as_list()
        alpha_shape = list(dims[1:])
        for axis in self.shared_axes or ():
            if not 1 <= axis < len(dims):
                raise ValueError(
                    f"shared_axes {self.shared_axes} of PReLU {self.name!r} must name axes 1 "
                    f"to {len(dims) - 1} of its input of shape {dims} (0 is the batch axis)."
                )
            alpha_shape[axis - 1] = 1
        if any(d is None for d in alpha_shape):
            raise ValueError(
                f"PReLU {self.name!r} needs every unshared input dimension known, got input "
                f"shape {dims}; share the unknown axes with shared_axes."
            )
        self.alpha = self.add_weight(
            "alpha",
            shape=alpha_shape,
            initializer=self.alpha_initializer,
            regularizer=self.alpha_regularizer,
            constraint=self.alpha_constraint,
        )
        self._ndim = len(dims)
        if self.shared_axes:
            self._axes = {i: dims[i] for i in range(1, len(dims)) if i not in self.shared_axes}
        self.built = True

    def call(self, inputs) -> Tensor:
        check_input(self, inputs, ndim=self._ndim, axes=self._axes)
        positive = nn_ops.relu(inputs)
        negative = math_ops.multiply(
            math_ops.negative(self.alpha), nn_ops.relu(math_ops.negative(inputs))
        )
        return math_ops.add(positive, negative)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        def regularizer(obj):
            return None if obj is None else regularizers.serialize(obj)

        def constraint(obj):
            return None if obj is None else constraints.serialize(obj)

        return {
            **super().get_config(),
            "alpha_initializer": initializers.serialize(self.alpha_initializer),
            "alpha_regularizer": regularizer(self.alpha_regularizer),
            "alpha_constraint": constraint(self.alpha_constraint),
            "shared_axes": self.shared_axes,
        }
