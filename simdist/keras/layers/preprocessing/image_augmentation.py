"""Random image augmentation layers: ``RandomFlip``, ``RandomRotation``, ``RandomZoom``,
``RandomTranslation``, ``RandomContrast``, ``RandomBrightness``.

Keras 2's rules: each acts only when called with ``training=True``, which is the default of
their ``call`` (so a direct call augments; ``fit`` trains; ``predict`` and ``evaluate`` pass
``training=False`` and the layer is the identity, after the cast to the compute dtype).
Per image of a batch: a horizontal then a vertical flip, each with probability 1/2; an
angle uniform in ``factor * 2 pi``; a zoom uniform in ``1 + height_factor`` (and
``1 + width_factor``, or the same as the height's); a shift uniform in ``height_factor *
height`` and ``width_factor * width`` pixels; a brightness delta uniform in ``factor *
(value_range[1] - value_range[0])``, the result clipped to ``value_range``. Per call (one for
the whole batch, as TF's ``stateless_random_contrast``): a contrast factor uniform in
``[1 - lower, 1 + upper]``, ``(x - mean) * factor + mean`` over each image's height and width,
clipped to ``[0, 255]``. Rotation, zoom and translation resample by
:func:`~simdist.core.ops.transform_ops.image_projective_transform` with the layer's
``fill_mode``, ``interpolation`` and ``fill_value``.

The random numbers come from ``simdist.core.random.draw(seed)``, one generator per call:
TF's seed rules, and under a strategy each replica draws its own (as simdist's ``Dropout``).
The numbers are simdist's, not TF's; their distributions are Keras 2's.
"""

from __future__ import annotations

import math

import numpy as np

from simdist.core import random as sd_random
from simdist.core.ops import array_ops, math_ops, reduction_ops
from simdist.core.ops.slicing_ops import reverse
from simdist.core.ops.transform_ops import FILL_MODES, INTERPOLATIONS, image_projective_transform
from simdist.core.tensor import Tensor, make_tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers.preprocessing.image_preprocessing import (
    image_tensor,
    random_layer_rng_type,
)

__all__ = [
    "RandomFlip",
    "RandomRotation",
    "RandomZoom",
    "RandomTranslation",
    "RandomContrast",
    "RandomBrightness",
]

_MODES = {
    "horizontal": (True, False),
    "vertical": (False, True),
    "horizontal_and_vertical": (True, True),
}


def _bounds(factor, name: str) -> tuple[float, float]:
    """``(lower, upper)`` of a factor given as a pair or as ``x`` meaning ``(-x, x)``."""
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(f"`{name}` must be a number or a pair of numbers, got {factor}.")
        return float(factor[0]), float(factor[1])
    if isinstance(factor, bool) or not isinstance(factor, (int, float, np.number)):
        raise ValueError(f"`{name}` must be a number or a pair of numbers, got {factor!r}.")
    return -float(factor), float(factor)


def _check_fill(fill_mode, interpolation) -> None:
    if fill_mode not in FILL_MODES:
        raise NotImplementedError(
            f"Unknown `fill_mode` {fill_mode}. Only `reflect`, `wrap`, `constant` and "
            "`nearest` are supported."
        )
    if interpolation not in INTERPOLATIONS:
        raise NotImplementedError(
            f"Unknown `interpolation` {interpolation}. Only `nearest` and `bilinear` are supported."
        )


class _RandomImageLayer(Layer):
    """A layer that augments in training and is the identity otherwise."""

    def __init__(self, seed=None, rng_type=None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        self.rng_type = random_layer_rng_type(rng_type)

    def call(self, inputs, training=True) -> Tensor:
        x = image_tensor(inputs, self.compute_dtype)
        if not training:
            return x
        single = x._value.ndim == 3
        batched = array_ops.expand_dims(x, 0) if single else x
        out = self._augment(batched, sd_random.draw(self.seed))
        return array_ops.squeeze(out, [0]) if single else out

    def _augment(self, images: Tensor, rng: np.random.Generator) -> Tensor:
        raise NotImplementedError

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "rng_type": self.rng_type, "seed": self.seed}


class RandomFlip(_RandomImageLayer):
    """Flip each image left-right and/or up-down, each with probability 1/2.

    Raises:
        ValueError: a ``mode`` other than ``horizontal``, ``vertical`` and
            ``horizontal_and_vertical``.
    """

    def __init__(self, mode="horizontal_and_vertical", seed=None, **kwargs) -> None:
        super().__init__(seed=seed, **kwargs)
        if mode not in _MODES:
            raise ValueError(
                f"RandomFlip layer {self.name} received an unknown mode argument {mode}; "
                f"use one of {sorted(_MODES)}."
            )
        self.mode = mode
        self.horizontal, self.vertical = _MODES[mode]

    def _augment(self, images, rng):
        n = images._value.shape[0]
        out = images
        for flips, axis in ((self.horizontal, 2), (self.vertical, 1)):
            if not flips:
                continue
            chosen = (rng.random(n) < 0.5).astype(images._value.dtype).reshape(n, 1, 1, 1)
            keep = make_tensor(1 - chosen, images.dtype)
            out = math_ops.add(
                math_ops.multiply(reverse(out, [axis]), make_tensor(chosen, images.dtype)),
                math_ops.multiply(out, keep),
            )
        return out

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode}


class _TransformLayer(_RandomImageLayer):
    """A random projective transform per image, resampled with ``fill_mode``,
    ``interpolation`` and ``fill_value``."""

    def __init__(
        self, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0, **kwargs
    ) -> None:
        super().__init__(seed=seed, **kwargs)
        _check_fill(fill_mode, interpolation)
        self.fill_mode = fill_mode
        self.interpolation = interpolation
        self.fill_value = fill_value

    def _augment(self, images, rng):
        n, height, width = images._value.shape[:3]
        transforms = self._transforms(rng, n, np.float32(height), np.float32(width))
        return image_projective_transform(
            images, transforms, None, self.fill_mode, self.interpolation, self.fill_value
        )

    def _transforms(self, rng, n: int, height, width) -> np.ndarray:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "interpolation": self.interpolation,
        }


def _uniform(rng, low: float, high: float, n: int) -> np.ndarray:
    return rng.uniform(low, high, n).astype(np.float32)


class RandomRotation(_TransformLayer):
    """Rotate each image by an angle uniform in ``[lower, upper] * 2 pi`` about its centre.

    Raises:
        ValueError: a ``factor`` whose upper bound is below its lower one.
        NotImplementedError: an unknown ``fill_mode`` or ``interpolation``.
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, **kwargs) -> None:  # fmt: skip
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.factor = factor
        self.lower, self.upper = _bounds(factor, "factor")
        if self.upper < self.lower:
            raise ValueError(
                f"`factor` argument cannot have a negative value. Received: factor={factor}"
            )

    def _transforms(self, rng, n, height, width):
        angles = _uniform(rng, self.lower * 2.0 * math.pi, self.upper * 2.0 * math.pi, n)
        cos, sin = np.cos(angles), np.sin(angles)
        w1, h1 = width - np.float32(1), height - np.float32(1)
        x_offset = (w1 - (cos * w1 - sin * h1)) / np.float32(2)
        y_offset = (h1 - (sin * w1 + cos * h1)) / np.float32(2)
        zeros = np.zeros(n, np.float32)
        return np.stack([cos, -sin, x_offset, sin, cos, y_offset, zeros, zeros], axis=1)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


class RandomZoom(_TransformLayer):
    """Zoom each image by ``1 + height_factor`` (and ``1 + width_factor``, or the same)
    about its centre: a positive factor zooms out, a negative one in.

    Raises:
        ValueError: a height factor outside [-1, 1] or a width factor below -1.
        NotImplementedError: an unknown ``fill_mode`` or ``interpolation``.
    """

    def __init__(
        self,
        height_factor,
        width_factor=None,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        **kwargs,
    ) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor = height_factor
        self.height_lower, self.height_upper = _bounds(height_factor, "height_factor")
        if abs(self.height_lower) > 1.0 or abs(self.height_upper) > 1.0:
            raise ValueError(
                "`height_factor` argument must have values between [-1, 1]. Received: "
                f"height_factor={height_factor}"
            )
        self.width_factor = width_factor
        if width_factor is not None:
            self.width_lower, self.width_upper = _bounds(width_factor, "width_factor")
            if self.width_lower < -1.0 or self.width_upper < -1.0:
                raise ValueError(
                    "`width_factor` argument must have values larger than -1. Received: "
                    f"width_factor={width_factor}"
                )

    def _transforms(self, rng, n, height, width):
        zoom_h = _uniform(rng, 1.0 + self.height_lower, 1.0 + self.height_upper, n)
        if self.width_factor is None:
            zoom_w = zoom_h
        else:
            zoom_w = _uniform(rng, 1.0 + self.width_lower, 1.0 + self.width_upper, n)
        x_offset = (width - np.float32(1)) / np.float32(2) * (np.float32(1) - zoom_w)
        y_offset = (height - np.float32(1)) / np.float32(2) * (np.float32(1) - zoom_h)
        zeros = np.zeros(n, np.float32)
        return np.stack([zoom_w, zeros, x_offset, zeros, zoom_h, y_offset, zeros, zeros], 1)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }


class RandomTranslation(_TransformLayer):
    """Shift each image by ``height_factor * height`` rows and ``width_factor * width``
    columns (each uniform in its bounds; positive moves down and right).

    Raises:
        ValueError: a factor outside [-1, 1] or with its upper bound below its lower one.
        NotImplementedError: an unknown ``fill_mode`` or ``interpolation``.
    """

    def __init__(
        self,
        height_factor,
        width_factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        **kwargs,
    ) -> None:
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        for name, factor in (("height_factor", height_factor), ("width_factor", width_factor)):
            lower, upper = _bounds(factor, name)
            if upper < lower:
                raise ValueError(
                    f"`{name}` cannot have upper bound less than lower bound, got {factor}"
                )
            if abs(lower) > 1.0 or abs(upper) > 1.0:
                raise ValueError(
                    f"`{name}` argument must have values between [-1, 1]. Received: {name}={factor}"
                )
        self.height_lower, self.height_upper = _bounds(height_factor, "height_factor")
        self.width_lower, self.width_upper = _bounds(width_factor, "width_factor")

    def _transforms(self, rng, n, height, width):
        dy = _uniform(rng, self.height_lower, self.height_upper, n) * height
        dx = _uniform(rng, self.width_lower, self.width_upper, n) * width
        ones, zeros = np.ones(n, np.float32), np.zeros(n, np.float32)
        return np.stack([ones, zeros, -dx, zeros, ones, -dy, zeros, zeros], axis=1)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }


class RandomContrast(_RandomImageLayer):
    """Scale each image's deviation from its per-channel mean by one factor per call, uniform
    in ``[1 - lower, 1 + upper]``, then clip to [0, 255].

    Raises:
        ValueError: a negative bound, or a lower bound above 1.
    """

    def __init__(self, factor, seed=None, **kwargs) -> None:
        super().__init__(seed=seed, **kwargs)
        self.factor = factor
        if isinstance(factor, (tuple, list)):
            self.lower, self.upper = float(factor[0]), float(factor[1])
        else:
            self.lower = self.upper = float(factor)
        if self.lower < 0.0 or self.upper < 0.0 or self.lower > 1.0:
            raise ValueError(
                "`factor` argument cannot have negative values or values greater than 1. "
                f"Received: factor={factor}"
            )

    def _augment(self, images, rng):
        factor = np.float32(rng.uniform(1.0 - self.lower, 1.0 + self.upper))
        mean = reduction_ops.reduce_mean(images, axis=[1, 2], keepdims=True)
        centred = math_ops.subtract(images, mean)
        adjusted = math_ops.add(
            math_ops.multiply(centred, factor.astype(images._value.dtype)), mean
        )
        return math_ops.clip_by_value(adjusted, 0.0, 255.0)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


class RandomBrightness(_RandomImageLayer):
    """Add to each image a delta uniform in ``factor * (high - low)`` of its
    ``value_range``, then clip to the range.

    Raises:
        ValueError: a factor outside [-1, 1] or not a number or pair; a ``value_range`` that
            is not a pair; at call, images of rank other than 3 or 4.
    """

    _FACTOR_ERROR = (
        "The `factor` argument should be a number (or a list of two numbers) in the range "
        "[-1.0, 1.0]. "
    )

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs) -> None:
        super().__init__(seed=seed, **kwargs)
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or any(not -1.0 <= f <= 1.0 for f in factor):
                raise ValueError(self._FACTOR_ERROR + f"Got {factor}")
            self._factor = sorted(factor)
        elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
            if not -1.0 <= factor <= 1.0:
                raise ValueError(self._FACTOR_ERROR + f"Got {factor}")
            self._factor = [-abs(factor), abs(factor)]
        else:
            raise ValueError(self._FACTOR_ERROR + f"Got {factor}")
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(
                f"The `value_range` argument should be a list of two numbers. Got {value_range}"
            )
        self._value_range = sorted(value_range)

    def call(self, inputs, training=True) -> Tensor:
        x = image_tensor(inputs, self.compute_dtype)
        if x._value.ndim not in (3, 4):
            raise ValueError(
                "Expected the input image to be rank 3 or 4. Got inputs.shape = "
                f"{list(x._value.shape)}"
            )
        return super().call(x, training=training)

    def _augment(self, images, rng):
        n = images._value.shape[0]
        low, high = self._value_range
        delta = rng.uniform(self._factor[0], self._factor[1], n).astype(np.float32)
        delta = (delta * np.float32(high - low)).astype(images._value.dtype).reshape(n, 1, 1, 1)
        shifted = math_ops.add(images, make_tensor(delta, images.dtype))
        return math_ops.clip_by_value(shifted, low, high)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "factor": self._factor,
            "value_range": self._value_range,
        }
