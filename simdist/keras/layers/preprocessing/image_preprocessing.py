"""Image resizing and cropping layers: ``Resizing``, ``CenterCrop``, ``RandomCrop``.

Keras 2's rules: images are ``[batch, height, width, channels]`` (or one unbatched
``[height, width, channels]``) and are cast to the layer's compute dtype first. ``Resizing``
resizes by TF 2's kernels (half-pixel centres; ``bilinear`` and ``nearest``, the two simdist
has), after a centred crop to the target's aspect ratio with ``crop_to_aspect_ratio``.
``CenterCrop`` crops the centre (offset ``(in - out) // 2``) and, when the image is smaller
than the target on either side, resizes it instead (Keras's ``smart_resize``: the largest
centred crop of the target's aspect ratio, then bilinear). ``RandomCrop`` crops at a random
offset when called with ``training=True`` (its default, as Keras 2's: a direct call crops at
random; ``fit`` trains, ``predict``/``evaluate`` pass ``training=False``) and the image is at
least the target's size, and otherwise ``smart_resize``\\ s to the target.
"""

from __future__ import annotations

import numpy as np

from simdist.core import random as sd_random
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, math_ops
from simdist.core.ops.resize_ops import resize_bilinear, resize_nearest
from simdist.core.ops.slicing_ops import slice as slice_op
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer

__all__ = [
    "Resizing",
    "CenterCrop",
    "RandomCrop",
    "smart_resize",
    "image_tensor",
    "random_layer_rng_type",
]

_INTERPOLATIONS = ("bilinear", "nearest")
_KERAS_INTERPOLATIONS = (
    "bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"
)  # fmt: skip


def image_tensor(inputs, dtype: str) -> Tensor:
    """``inputs`` as a tensor of ``dtype`` (Keras's ``convert_inputs``).

    Raises:
        ValueError: a dict of inputs (Keras 2 points to KerasCV for images with boxes).
    """
    if isinstance(inputs, dict):
        raise ValueError(
            "This layer can only process a tensor representing an image or a batch of images. "
            f"Received: type(inputs)={type(inputs)}. A dict of images, labels and bounding "
            "boxes is for KerasCV's layers."
        )
    x = convert_to_tensor(inputs)
    return x if x.dtype.name == dtype else math_ops.cast(x, dtype)


_RNG_TYPES = ("stateful", "stateless", "legacy_stateful")


def _rng_type(value) -> str:
    """Keras 2's ``rng_type`` of a random layer (``None``: ``'stateful'``, what its image
    layers choose). simdist accepts and keeps it; its numbers come from its own streams
    whatever the type.

    Raises:
        ValueError: a type Keras does not know.
    """
    if value is None:
        return "stateful"
    if value not in _RNG_TYPES:
        raise ValueError(
            f"Invalid `rng_type` received. Valid `rng_type` are {list(_RNG_TYPES)}. Got: {value}"
        )
    return value


random_layer_rng_type = _rng_type


def _batched(x: Tensor) -> tuple[Tensor, bool]:
    rank = x._value.ndim
    if rank == 3:
        return array_ops.expand_dims(x, 0), True
    if rank != 4:
        raise ValueError(
            "Expected an image array with shape `(height, width, channels)`, or "
            f"`(batch_size, height, width, channels)`, but got input of shape "
            f"{list(x._value.shape)}."
        )
    return x, False


def _resize(x: Tensor, height: int, width: int, interpolation: str) -> Tensor:
    batched, single = _batched(x)
    kernel = resize_bilinear if interpolation == "bilinear" else resize_nearest
    out = kernel(batched, [height, width])
    return array_ops.squeeze(out, [0]) if single else out


def _crop(x: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    if x._value.ndim == 3:
        return slice_op(x, [top, left, 0], [height, width, -1])
    return slice_op(x, [0, top, left, 0], [-1, height, width, -1])


def smart_resize(x: Tensor, size, interpolation: str = "bilinear") -> Tensor:
    """Resize to ``size`` after cropping the largest centred box of its aspect ratio."""
    height, width = x._value.shape[-3:-1]
    target_h, target_w = (int(s) for s in size)
    crop_h = min(height, int(np.float32(width * target_h) / np.float32(target_w)))
    crop_w = min(width, int(np.float32(height * target_w) / np.float32(target_h)))
    top = int(np.float32(height - crop_h) / np.float32(2))
    left = int(np.float32(width - crop_w) / np.float32(2))
    return _resize(_crop(x, top, left, crop_h, crop_w), target_h, target_w, interpolation)


def _check_size(height, width, layer: str) -> tuple[int, int]:
    for name, value in (("height", height), ("width", width)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(f"`{name}` of {layer} must be a positive integer, got {value!r}.")
    return int(height), int(width)


class _SizedImageLayer(Layer):
    """A layer that outputs ``height x width`` images."""

    def __init__(self, height, width, **kwargs) -> None:
        super().__init__(**kwargs)
        self.height, self.width = _check_size(height, width, type(self).__name__)

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        dims[-3], dims[-2] = self.height, self.width
        return TensorShape(dims)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width}


class Resizing(_SizedImageLayer):
    """Resize images to ``height x width``.

    Raises:
        NotImplementedError: an interpolation Keras knows but simdist does not resize by
            (``bicubic``, ``area``, ``lanczos*``, ``gaussian``, ``mitchellcubic``), or one
            Keras does not know either.
    """

    def __init__(
        self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, **kwargs
    ) -> None:
        super().__init__(height, width, **kwargs)
        method = str(interpolation).lower()
        if method not in _KERAS_INTERPOLATIONS:
            raise NotImplementedError(
                f"Value not recognized for `interpolation`: {interpolation}. Supported "
                f"values are: {list(_KERAS_INTERPOLATIONS)}"
            )
        if method not in _INTERPOLATIONS:
            raise NotImplementedError(
                f"Resizing(interpolation={interpolation!r}) is not in simdist: it resizes "
                "by 'bilinear' and 'nearest' only."
            )
        self.interpolation = interpolation
        self._method = method
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)

    def call(self, inputs) -> Tensor:
        dtype = self.compute_dtype if self._method == "nearest" else "float32"
        x = image_tensor(inputs, dtype)
        size = (self.height, self.width)
        if self.crop_to_aspect_ratio:
            out = smart_resize(x, size, self._method)
        else:
            out = _resize(x, *size, self._method)
        return (
            out if out.dtype.name == self.compute_dtype else math_ops.cast(out, self.compute_dtype)
        )

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "interpolation": self.interpolation,
            "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
        }


class CenterCrop(_SizedImageLayer):
    """The central ``height x width`` of each image (``smart_resize`` when it is smaller)."""

    def call(self, inputs) -> Tensor:
        x = image_tensor(inputs, self.compute_dtype)
        height, width = x._value.shape[-3:-1]
        h_diff, w_diff = height - self.height, width - self.width
        if h_diff < 0 or w_diff < 0:
            return math_ops.cast(smart_resize(x, (self.height, self.width)), self.compute_dtype)
        return _crop(x, h_diff // 2, w_diff // 2, self.height, self.width)


class RandomCrop(_SizedImageLayer):
    """A ``height x width`` crop at a random offset in training (one offset per call, for
    the whole batch, as Keras 2), ``smart_resize`` to the target otherwise."""

    def __init__(self, height, width, seed=None, rng_type=None, **kwargs) -> None:
        super().__init__(height, width, **kwargs)
        self.seed = seed
        self.rng_type = _rng_type(rng_type)

    def call(self, inputs, training=True) -> Tensor:
        x = image_tensor(inputs, self.compute_dtype)
        height, width = x._value.shape[-3:-1]
        h_diff, w_diff = height - self.height, width - self.width
        if training and h_diff >= 0 and w_diff >= 0:
            rng = sd_random.draw(self.seed)
            top, left = (int(v) for v in rng.integers(0, (h_diff + 1, w_diff + 1)))
            return _crop(x, top, left, self.height, self.width)
        return math_ops.cast(smart_resize(x, (self.height, self.width)), self.compute_dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "rng_type": self.rng_type, "seed": self.seed}
