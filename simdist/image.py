"""``tf.image``: resizing, flips, crops, dtype conversion and colour adjustments of images.

Images are ``[height, width, channels]`` or a batch ``[batch, height, width, channels]``, as
in TF. Resizing uses the kernels of ``simdist.core.ops.resize_ops``; the rest is built from
simdist's ops (so gradients follow them), in the order TF's own Python builds them, and the
random ones draw from simdist's seeded streams (``tf.random``'s seed rules; the values are
simdist's, not TF's Philox stream).
"""

from __future__ import annotations

import enum

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core import random as _random
from simdist.core.convert import convert_to_tensor
from simdist.core.ops.array_ops import expand_dims, pad, reshape, squeeze, tile, transpose
from simdist.core.ops.contraction_ops import tensordot
from simdist.core.ops.math_ops import (
    add,
    cast,
    divide,
    floordiv,
    maximum,
    multiply,
    reduce_mean,
    reduce_std,
    round,
    rsqrt,
    saturate_cast,
    subtract,
)
from simdist.core.ops.resize_ops import resize_bilinear, resize_nearest
from simdist.core.ops.slicing_ops import reverse, slice
from simdist.core.tensor import Tensor

__all__ = [
    "ResizeMethod", "resize", "flip_left_right", "flip_up_down", "random_flip_left_right",
    "random_flip_up_down", "rot90", "convert_image_dtype", "per_image_standardization",
    "central_crop", "crop_to_bounding_box", "pad_to_bounding_box", "resize_with_crop_or_pad",
    "random_crop", "adjust_brightness", "random_brightness", "adjust_contrast",
    "random_contrast", "rgb_to_grayscale", "grayscale_to_rgb",
]  # fmt: skip


class ResizeMethod(str, enum.Enum):
    """``tf.image.ResizeMethod``: the sampling methods' names (simdist has two of them)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


def _batched(image) -> tuple[Tensor, bool]:
    """``(4-D images, whether the input was one 3-D image)``."""
    x = convert_to_tensor(image)
    if x._value.ndim == 3:
        return expand_dims(x, 0), True
    if x._value.ndim == 4:
        return x, False
    raise ValueError(
        f"'image' must be 3-D [height, width, channels] or 4-D [batch, height, width, "
        f"channels], got shape {list(x._value.shape)}."
    )


def _unbatched(x: Tensor, single: bool) -> Tensor:
    return squeeze(x, [0]) if single else x


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None) -> Tensor:  # fmt: skip
    """``tf.image.resize`` (TF 2): half-pixel centres; bilinear gives float32, nearest keeps
    the dtype.

    Raises:
        NotImplementedError: a method other than bilinear and nearest, or ``antialias=True``
            (TF then runs a separable filter simdist does not have).
        ValueError: images that are not 3-D or 4-D.
    """
    method = ResizeMethod(method.value if isinstance(method, ResizeMethod) else method)
    if method not in (ResizeMethod.BILINEAR, ResizeMethod.NEAREST_NEIGHBOR):
        raise NotImplementedError(
            f"tf.image.resize(method={method.value!r}) is not in simdist; it has 'bilinear' "
            "and 'nearest'."
        )
    if antialias:
        raise NotImplementedError(
            "tf.image.resize(antialias=True) is not in simdist (TF runs a separable "
            "scale-and-translate filter); resize without it."
        )
    x, single = _batched(images)
    hw = [int(v) for v in np.asarray(convert_to_tensor(size)._value).reshape(-1)]
    if len(hw) != 2:
        raise ValueError(
            f"'size' must be a 1-D tensor of 2 elements: new_height, new_width; got {size!r}."
        )
    if preserve_aspect_ratio:
        h, w = x._value.shape[1:3]
        factor = np.minimum(np.float32(hw[0]) / np.float32(h), np.float32(hw[1]) / np.float32(w))
        hw = [int(np.round(factor * np.float32(h))), int(np.round(factor * np.float32(w)))]
    kernel = resize_bilinear if method is ResizeMethod.BILINEAR else resize_nearest
    return _unbatched(kernel(x, hw), single)


def flip_left_right(image) -> Tensor:
    """The images mirrored left to right (the width axis reversed)."""
    x, single = _batched(image)
    return _unbatched(reverse(x, [2]), single)


def flip_up_down(image) -> Tensor:
    """The images upside down (the height axis reversed)."""
    x, single = _batched(image)
    return _unbatched(reverse(x, [1]), single)


def _random_flip(image, axis: int, seed) -> Tensor:
    x, single = _batched(image)
    n = x._value.shape[0]
    # Per image: flip where a uniform draw rounds to 1 (as TF's random_flip_* on a batch).
    flips = round(_random.uniform([n], 0, 1.0, seed=seed))
    flips = cast(reshape(flips, [n, 1, 1, 1]), x._dtype)
    flipped = reverse(x, [axis])
    one = cast(1, x._dtype)
    return _unbatched(add(multiply(flips, flipped), multiply(subtract(one, flips), x)), single)


def random_flip_left_right(image, seed=None) -> Tensor:
    """Each image mirrored left to right with probability 1/2."""
    return _random_flip(image, 2, seed)


def random_flip_up_down(image, seed=None) -> Tensor:
    """Each image turned upside down with probability 1/2."""
    return _random_flip(image, 1, seed)


def rot90(image, k=1, name=None) -> Tensor:
    """The images rotated counter-clockwise by ``k`` quarter turns."""
    x, single = _batched(image)
    k = int(np.asarray(convert_to_tensor(k)._value)) % 4
    if k == 1:
        x = reverse(transpose(x, [0, 2, 1, 3]), [1])
    elif k == 2:
        x = reverse(x, [1, 2])
    elif k == 3:
        x = transpose(reverse(x, [1]), [0, 2, 1, 3])
    return _unbatched(x, single)


def convert_image_dtype(image, dtype, saturate=False, name=None) -> Tensor:
    """Convert between image dtypes, rescaling as TF does: integers span [0, MAX], floats
    [0, 1); float to integer multiplies by ``MAX + 0.5`` and truncates."""
    x = convert_to_tensor(image)
    dtype = dtypes.as_dtype(dtype)
    if not (x._dtype.is_floating or x._dtype.is_integer) or x._dtype.is_bool:
        raise AttributeError(f"image dtype {x._dtype.name} is neither integer nor floating.")
    if not (dtype.is_floating or dtype.is_integer) or dtype.is_bool:
        raise AttributeError(f"dtype {dtype.name} is neither integer nor floating.")
    if x._dtype == dtype:
        return x
    convert = saturate_cast if saturate else cast
    if x._dtype.is_integer and dtype.is_integer:
        scale_in, scale_out = np.iinfo(x._dtype._np).max, np.iinfo(dtype._np).max
        if scale_in > scale_out:
            scale = (int(scale_in) + 1) // (int(scale_out) + 1)
            return convert(floordiv(x, cast(scale, x._dtype)), dtype)
        scale = (int(scale_out) + 1) // (int(scale_in) + 1)
        return multiply(convert(x, dtype), cast(scale, dtype))
    if x._dtype.is_floating and dtype.is_floating:
        return cast(x, dtype)
    if x._dtype.is_integer:  # integer -> float
        return multiply(cast(x, dtype), cast(1.0 / float(np.iinfo(x._dtype._np).max), dtype))
    scale = float(np.iinfo(dtype._np).max) + 0.5  # float -> integer
    return convert(multiply(x, cast(scale, x._dtype)), dtype)


def per_image_standardization(image) -> Tensor:
    """Each image less its mean, divided by ``max(stddev, 1/sqrt(pixels * channels))``;
    integer images are converted to float32 first (without rescaling, as TF)."""
    x = convert_to_tensor(image)
    if x._value.ndim < 3:
        raise ValueError(f"'image' must be at least 3-D, got shape {list(x._value.shape)}.")
    if not x._dtype.is_floating:
        x = cast(x, dtypes.float32)
    pixels = int(np.prod(x._value.shape[-3:]))
    mean = reduce_mean(x, axis=[-1, -2, -3], keepdims=True)
    stddev = reduce_std(x, axis=[-1, -2, -3], keepdims=True)
    adjusted = maximum(stddev, rsqrt(cast(pixels, x._dtype)))
    return divide(subtract(x, mean), adjusted)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The box of ``target_height x target_width`` at the given offsets."""
    x, single = _batched(image)
    n, h, w, c = x._value.shape
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    if oh < 0 or ow < 0 or th <= 0 or tw <= 0 or oh + th > h or ow + tw > w:
        raise ValueError(
            f"crop_to_bounding_box: the box (offset {oh}, {ow}, size {th} x {tw}) must lie in "
            f"the {h} x {w} image with a positive size."
        )
    return _unbatched(slice(x, [0, oh, ow, 0], [n, th, tw, c]), single)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The images zero-padded to ``target_height x target_width``, placed at the offsets."""
    x, single = _batched(image)
    h, w = x._value.shape[1:3]
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height, target_width))
    after_h, after_w = th - oh - h, tw - ow - w
    if min(oh, ow, after_h, after_w) < 0:
        raise ValueError(
            f"pad_to_bounding_box: a {h} x {w} image at offset ({oh}, {ow}) does not fit in "
            f"{th} x {tw}."
        )
    return _unbatched(pad(x, [[0, 0], [oh, after_h], [ow, after_w], [0, 0]]), single)


def resize_with_crop_or_pad(image, target_height, target_width) -> Tensor:
    """Crop (centred) or zero-pad (centred) each axis to the target size, as TF."""
    x, single = _batched(image)
    h, w = x._value.shape[1:3]
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError(f"target size must be positive, got {th} x {tw}.")
    crop_h, crop_w = max((h - th) // 2, 0), max((w - tw) // 2, 0)
    pad_h, pad_w = max((th - h) // 2, 0), max((tw - w) // 2, 0)
    cropped = crop_to_bounding_box(x, crop_h, crop_w, min(th, h), min(tw, w))
    return _unbatched(pad_to_bounding_box(cropped, pad_h, pad_w, th, tw), single)


def central_crop(image, central_fraction) -> Tensor:
    """The central ``central_fraction`` of each axis (TF's rounding of the box)."""
    fraction = float(central_fraction)
    if not 0.0 < fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if fraction == 1.0:
        return convert_to_tensor(image)
    x, single = _batched(image)
    h, w = x._value.shape[1:3]
    start_h = int((h - h * fraction) / 2)  # TF: int32(float_h - float_h * fraction) / 2
    start_w = int((w - w * fraction) / 2)
    box = crop_to_bounding_box(x, start_h, start_w, h - start_h * 2, w - start_w * 2)
    return _unbatched(box, single)


def random_crop(value, size, seed=None, name=None) -> Tensor:
    """A random ``size`` slice of ``value`` (any rank), every offset equally likely."""
    x = convert_to_tensor(value)
    shape = np.asarray(x._value.shape, np.int64)
    want = np.asarray(convert_to_tensor(size)._value, np.int64).reshape(-1)
    if want.shape != shape.shape or np.any(want > shape) or np.any(want < 0):
        raise errors.InvalidArgumentError(
            f"random_crop: size {want.tolist()} must have one entry per axis of the value "
            f"(shape {shape.tolist()}), none larger than the axis."
        )
    limit = shape - want + 1
    draw = _random.uniform([len(shape)], 0, np.iinfo(np.int32).max, dtype=dtypes.int32, seed=seed)
    offset = np.asarray(draw._value, np.int64) % limit
    return slice(x, offset.tolist(), want.tolist())


def _as_float(image) -> tuple[Tensor, dtypes.DType]:
    x = convert_to_tensor(image)
    return (x if x._dtype.is_floating else convert_image_dtype(x, dtypes.float32)), x._dtype


def _back(x: Tensor, dtype: dtypes.DType) -> Tensor:
    return x if dtype.is_floating else convert_image_dtype(x, dtype, saturate=True)


def adjust_brightness(image, delta) -> Tensor:
    """``image + delta`` (on the [0, 1) scale for integer images, saturated back)."""
    x, original = _as_float(image)
    return _back(add(x, cast(delta, x._dtype)), original)


def random_brightness(image, max_delta, seed=None) -> Tensor:
    """:func:`adjust_brightness` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = _random.uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def adjust_contrast(images, contrast_factor) -> Tensor:
    """Per image and channel: ``(x - mean) * contrast_factor + mean`` over height and width."""
    x, original = _as_float(images)
    mean = reduce_mean(x, axis=[-3, -2], keepdims=True)
    factor = cast(contrast_factor, x._dtype)
    return _back(add(multiply(subtract(x, mean), factor), mean), original)


def random_contrast(image, lower, upper, seed=None) -> Tensor:
    """:func:`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, _random.uniform([], lower, upper, seed=seed))


def rgb_to_grayscale(images, name=None) -> Tensor:
    """The luma of RGB images (ITU-R 601 weights 0.2989, 0.5870, 0.1140), one channel."""
    x, original = _as_float(images)
    weights = convert_to_tensor(np.asarray([0.2989, 0.5870, 0.1140], x._dtype._np))
    gray = expand_dims(tensordot(x, weights, [[-1], [-1]]), -1)
    return convert_image_dtype(gray, original)


def grayscale_to_rgb(images, name=None) -> Tensor:
    """One-channel images repeated into three channels."""
    x = convert_to_tensor(images)
    if x._value.shape[-1:] != (1,):
        raise ValueError(f"the last axis must have size 1, got shape {list(x._value.shape)}.")
    return tile(x, [1] * (x._value.ndim - 1) + [3])



from simdist import symbolic_dispatch as _symbolic_dispatch  # noqa: E402

_symbolic_dispatch.install(globals(), "image", __all__)  # on KerasTensors: Keras op layers
