"""Compute descriptions of the image preprocessing and augmentation layers (read by
``cost``), counted as ``compute_rules`` counts. The random layers are priced as in training
(``fit``), where they act; at inference each is a copy at most.

* Resizing (and the resize of CenterCrop/RandomCrop when the image is smaller than the
  target): bilinear reads 4 pixels per output value and mixes them (8 FLOPs: 4 multiplies,
  3 adds, one lerp weight); nearest copies (0 FLOPs). Backward spreads each output gradient
  over the pixels it read, the same FLOPs.
* CenterCrop / RandomCrop: a copy of the crop (0 FLOPs), its gradient a padded copy back.
* RandomFlip: a select per flipped axis (1 FLOP per element each).
* RandomRotation / RandomZoom / RandomTranslation: the projective transform, per output
  value: the map of its coordinates (about 10 FLOPs per pixel, over the channels) and a
  bilinear mix of 4 pixels (8 FLOPs; nearest: 0); backward the inverse transform of the
  gradient, the same.
* RandomContrast: the per-image mean (1 FLOP per element), then subtract, scale, add and
  clip (4 per element); backward 3 per element. RandomBrightness: add and clip (2 each way).
"""

from __future__ import annotations

import math

from simdist.core.compute_description import (
    ComputeDescription,
    Kernel,
    register_compute_rule,
)
from simdist.keras.layers.preprocessing.image_augmentation import (
    RandomBrightness,
    RandomContrast,
    RandomFlip,
    RandomRotation,
    RandomTranslation,
    RandomZoom,
)
from simdist.keras.layers.preprocessing.image_preprocessing import (
    CenterCrop,
    RandomCrop,
    Resizing,
)

__all__: list[str] = []


def _image_shape(layer, shape) -> tuple[int, int, int]:
    if len(shape) != 3:
        raise ValueError(f"{layer.name!r} needs (height, width, channels), got {shape}")
    return tuple(int(d) for d in shape)


def _pointwise(name: str, elements: int, size: int, flops_each: float, reads: int = 1):
    return Kernel(name, flops_each * elements, float((reads + 1) * elements * size))


def _resampled(name, in_elements, out_elements, size, flops_each) -> tuple[Kernel, Kernel]:
    forward = Kernel(name, flops_each * out_elements, float((in_elements + out_elements) * size))
    backward = Kernel(
        f"{name}_grad", flops_each * out_elements, float((in_elements + out_elements) * size)
    )
    return forward, backward


@register_compute_rule(Resizing)
def _resizing(layer, shape, batch, size):
    h, w, c = _image_shape(layer, shape)
    out_shape = (layer.height, layer.width, c)
    flops = 8.0 if layer._method == "bilinear" else 0.0
    forward, backward = _resampled(
        "resize", batch * h * w * c, batch * math.prod(out_shape), size, flops
    )
    return ComputeDescription(out_shape, (), (forward,), (), (backward,))


def _crop(layer, shape, batch, size):
    h, w, c = _image_shape(layer, shape)
    out_shape = (layer.height, layer.width, c)
    resizes = h < layer.height or w < layer.width
    forward, backward = _resampled(
        "resize" if resizes else "crop",
        batch * h * w * c,
        batch * math.prod(out_shape),
        size,
        8.0 if resizes else 0.0,
    )
    return ComputeDescription(out_shape, (), (forward,), (), (backward,))


register_compute_rule(CenterCrop)(_crop)
register_compute_rule(RandomCrop)(_crop)


@register_compute_rule(RandomFlip)
def _random_flip(layer, shape, batch, size):
    elements = batch * math.prod(_image_shape(layer, shape))
    axes = int(layer.horizontal) + int(layer.vertical)
    forward = _pointwise("flip", elements, size, float(axes), reads=2)
    backward = _pointwise("flip_grad", elements, size, float(axes), reads=2)
    return ComputeDescription(tuple(shape), (), (forward,), (), (backward,))


def _transform(layer, shape, batch, size):
    h, w, c = _image_shape(layer, shape)
    elements = batch * h * w * c
    per_value = (8.0 if layer.interpolation == "bilinear" else 0.0) + 10.0 / c
    forward, backward = _resampled("projective_transform", elements, elements, size, per_value)
    return ComputeDescription(tuple(shape), (), (forward,), (), (backward,))


for _cls in (RandomRotation, RandomZoom, RandomTranslation):
    register_compute_rule(_cls)(_transform)


@register_compute_rule(RandomContrast)
def _random_contrast(layer, shape, batch, size):
    elements = batch * math.prod(_image_shape(layer, shape))
    forward = (
        _pointwise("image_mean", elements, size, 1.0),
        _pointwise("contrast", elements, size, 4.0, reads=2),
    )
    backward = (_pointwise("contrast_grad", elements, size, 3.0, reads=2),)
    return ComputeDescription(tuple(shape), (), forward, (), backward)


@register_compute_rule(RandomBrightness)
def _random_brightness(layer, shape, batch, size):
    elements = batch * math.prod(shape)
    forward = _pointwise("brightness", elements, size, 2.0)
    backward = _pointwise("brightness_grad", elements, size, 2.0, reads=2)
    return ComputeDescription(tuple(shape), (), (forward,), (), (backward,))
