"""Noise and structured dropout layers: ``GaussianNoise``, ``GaussianDropout``,
``AlphaDropout``, ``SpatialDropout1D``, ``SpatialDropout2D``.

Keras 2's rules: each acts only when called with ``training=True`` (``fit`` does; a direct
call without ``training`` is the identity, as with ``Dropout``), and passes the Keras mask.
``GaussianNoise`` adds ``N(0, stddev)``; ``GaussianDropout`` multiplies by ``N(1,
sqrt(rate / (1 - rate)))`` (for ``0 < rate < 1``); ``AlphaDropout`` sets a fraction ``rate``
(drawn over ``noise_shape``, by default the input's) to SELU's negative saturation
``-alpha * scale`` and applies the affine map ``a x + b`` that keeps SELU's mean and variance,
``a = ((1 - rate) (1 + rate alpha_p^2))^-1/2``, ``b = -a alpha_p rate``;
``SpatialDropout1D``/``2D`` are ``Dropout`` over whole channels (``noise_shape`` ``(batch, 1,
channels)`` and ``(batch, 1, 1, channels)``; ``channels_first`` images ``(batch, channels, 1,
1)``).

The noise comes from ``simdist.core.random.draw(seed)``, one generator per call (TF's seed
rules; each replica of a strategy draws its own), so the numbers are simdist's, not TF's.
"""

from __future__ import annotations

import numpy as np

from simdist.core import random as sd_random
from simdist.core.ops import math_ops, nn_ops
from simdist.core.tensor import Tensor, make_tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import check_input, static_shape
from simdist.keras.layers.core import Dropout

__all__ = [
    "GaussianNoise",
    "GaussianDropout",
    "AlphaDropout",
    "SpatialDropout1D",
    "SpatialDropout2D",
]

_SELU_ALPHA = 1.6732632423543772
_SELU_SCALE = 1.0507009873554805


class _NoiseLayer(Layer):
    def __init__(self, seed=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True
        self.seed = seed

    def compute_output_shape(self, input_shape):
        return input_shape


def _normal(seed, shape, dtype, mean: float, stddev: float) -> np.ndarray:
    z = sd_random.draw(seed).standard_normal(shape, dtype=np.float64)
    return (z * stddev + mean).astype(dtype)


class GaussianNoise(_NoiseLayer):
    """Add zero-mean Gaussian noise of standard deviation ``stddev`` in training."""

    def __init__(self, stddev, seed=None, **kwargs) -> None:
        super().__init__(seed=seed, **kwargs)
        self.stddev = stddev

    def call(self, inputs, training=None) -> Tensor:
        if not training:
            return inputs
        noise = _normal(self.seed, static_shape(inputs), inputs.dtype.as_numpy_dtype, 0.0,
                        float(self.stddev))  # fmt: skip
        return math_ops.add(inputs, make_tensor(noise, inputs.dtype))

    def get_config(self) -> dict:
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(_NoiseLayer):
    """Multiply by Gaussian noise of mean 1 and variance ``rate / (1 - rate)`` in training."""

    def __init__(self, rate, seed=None, **kwargs) -> None:
        super().__init__(seed=seed, **kwargs)
        self.rate = rate

    def call(self, inputs, training=None) -> Tensor:
        if not training or not 0 < self.rate < 1:
            return inputs
        stddev = float(np.sqrt(self.rate / (1.0 - self.rate)))
        noise = _normal(self.seed, static_shape(inputs), inputs.dtype.as_numpy_dtype, 1.0, stddev)
        return math_ops.multiply(inputs, make_tensor(noise, inputs.dtype))

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class AlphaDropout(_NoiseLayer):
    """Dropout that keeps SELU's self-normalisation (see the module docstring)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs) -> None:
        super().__init__(seed=seed, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape

    def call(self, inputs, training=None) -> Tensor:
        if not training or not 0.0 < self.rate < 1.0:
            return inputs
        dtype = inputs.dtype.as_numpy_dtype
        shape = tuple(self.noise_shape) if self.noise_shape else static_shape(inputs)
        kept = sd_random.draw(self.seed).random(shape, dtype=np.float32) >= self.rate
        kept = kept.astype(dtype)
        rate, alpha_p = self.rate, -_SELU_ALPHA * _SELU_SCALE
        a = ((1 - rate) * (1 + rate * alpha_p**2)) ** -0.5
        b = -a * alpha_p * rate
        dropped = make_tensor((alpha_p * (1 - kept)).astype(dtype), inputs.dtype)
        x = math_ops.add(math_ops.multiply(inputs, make_tensor(kept, inputs.dtype)), dropped)
        return math_ops.add(math_ops.multiply(x, dtype(a)), dtype(b))

    def get_config(self) -> dict:
        # Keras 2 leaves noise_shape out of the config
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class SpatialDropout1D(Dropout):
    """``Dropout`` of whole channels of ``[batch, steps, channels]`` inputs.

    Raises:
        ValueError: at call, an input that is not 3-D.
    """

    def __init__(self, rate, **kwargs) -> None:
        super().__init__(rate, **kwargs)

    def call(self, inputs, training=None) -> Tensor:
        check_input(self, inputs, ndim=3)
        if not training or self.rate == 0:
            return inputs
        batch, _, channels = static_shape(inputs)
        return nn_ops.dropout(inputs, self.rate, noise_shape=(batch, 1, channels), seed=self.seed)


class SpatialDropout2D(Dropout):
    """``Dropout`` of whole feature maps of 4-D images.

    Raises:
        ValueError: a ``data_format`` other than ``channels_last``/``channels_first``; at
            call, an input that is not 4-D.
    """

    def __init__(self, rate, data_format=None, **kwargs) -> None:
        super().__init__(rate, **kwargs)
        data_format = "channels_last" if data_format is None else data_format
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(
                '`data_format` must be "channels_last" or "channels_first". Received: '
                f"data_format={data_format}."
            )
        self.data_format = data_format

    def call(self, inputs, training=None) -> Tensor:
        check_input(self, inputs, ndim=4)
        if not training or self.rate == 0:
            return inputs
        n, d1, _, d3 = static_shape(inputs)
        channels_last = self.data_format == "channels_last"
        noise_shape = (n, 1, 1, d3) if channels_last else (n, d1, 1, 1)
        return nn_ops.dropout(inputs, self.rate, noise_shape=noise_shape, seed=self.seed)
