"""``tf.keras.applications.imagenet_utils``: ImageNet preprocessing, prediction decoding, and the
input-shape rules the application models share.

``preprocess_input(x, mode=...)`` as Keras 2:

* ``"caffe"`` (ResNet, VGG): RGB -> BGR, then each channel minus the ImageNet mean
  ``(103.939, 116.779, 123.68)`` (in BGR order), no scaling;
* ``"tf"`` (ResNetV2, MobileNetV2): ``x / 127.5 - 1``, pixels in [-1, 1];
* ``"torch"``: ``x / 255``, then minus the mean ``(0.485, 0.456, 0.406)`` and divided by the
  standard deviation ``(0.229, 0.224, 0.225)`` per channel.

A NumPy array is changed in place where its dtype allows (a float array: as Keras says, pass
``np.copy(x)`` to keep yours); an integer array is converted to ``floatx`` first. A tensor gives
a new tensor. A Functional model's symbolic input (a ``KerasTensor``) gets the same arithmetic
as one ``Lambda`` layer (Keras 2 records one ``TFOpLambda`` layer per op instead).

``obtain_input_shape``, ``correct_pad`` and ``validate_activation`` are the shape and argument
rules of the application builders, with Keras 2's errors.
"""

from __future__ import annotations

import json
import warnings

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops, slicing_ops
from simdist.core.tensor import Tensor
from simdist.keras import activations, backend

__all__ = ["preprocess_input", "decode_predictions"]

CLASS_INDEX_PATH = (
    "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
)
_CLASS_INDEX_HASH = "c2c37ea517e94d9795004a39431a14cb"
_CAFFE_MEAN = (103.939, 116.779, 123.68)  # BGR
_TORCH_MEAN = (0.485, 0.456, 0.406)
_TORCH_STD = (0.229, 0.224, 0.225)
_CLASS_INDEX = None


def preprocess_input(x, data_format=None, mode="caffe"):
    """Preprocess a batch of images (or one image) with values in [0, 255] for a model.

    Args:
        x: a NumPy array, a tensor, or a Functional model's symbolic input; 3-D or 4-D with 3
            colour channels.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        mode: ``"caffe"``, ``"tf"`` or ``"torch"`` (see the module docstring).

    Returns:
        The preprocessed array (float; for a float NumPy input, the same memory) or tensor.

    Raises:
        ValueError: an unknown ``mode`` or ``data_format``.
    """
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(
            f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}"
        )
    if data_format is None:
        data_format = "channels_last"
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError(
            "Expected data_format to be one of `channels_first` or `channels_last`. "
            f"Received: data_format={data_format}"
        )
    if isinstance(x, np.ndarray):
        return _preprocess_numpy(x, data_format, mode)
    from simdist.keras.engine.keras_tensor import KerasTensor

    if isinstance(x, KerasTensor):
        from simdist.keras.layers.lambda_layer import Lambda

        return Lambda(lambda t: _preprocess_tensor(t, data_format, mode))(x)
    return _preprocess_tensor(convert_to_tensor(x), data_format, mode)


def _channel_view(x: np.ndarray, data_format: str, channel: int) -> np.ndarray:
    if data_format == "channels_last":
        return x[..., channel]
    return x[channel] if x.ndim == 3 else x[:, channel]


def _preprocess_numpy(x: np.ndarray, data_format: str, mode: str) -> np.ndarray:
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype(backend.floatx(), copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        channel_axis = -1 if data_format == "channels_last" else (0 if x.ndim == 3 else 1)
        x = np.flip(x, axis=channel_axis)  # RGB -> BGR, a view as Keras's x[..., ::-1]
        mean, std = _CAFFE_MEAN, None
    for channel in range(3):
        view = _channel_view(x, data_format, channel)
        view -= mean[channel]
        if std is not None:
            view /= std[channel]
    return x


def _per_channel(values, x: Tensor, data_format: str) -> Tensor:
    constant = convert_to_tensor(np.asarray(values, dtype=np.float32))
    constant = math_ops.cast(constant, x.dtype)
    if data_format == "channels_first":
        from simdist.core.ops import array_ops

        return array_ops.reshape(constant, [3, 1, 1])
    return constant


def _preprocess_tensor(x: Tensor, data_format: str, mode: str) -> Tensor:
    if mode == "tf":
        return math_ops.subtract(math_ops.divide(x, 127.5), 1.0)
    if mode == "torch":
        x = math_ops.divide(x, 255.0)
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        axis = -1 if data_format == "channels_last" else (0 if x.shape.rank == 3 else 1)
        x = slicing_ops.reverse(x, [axis])
        mean, std = _CAFFE_MEAN, None
    x = math_ops.add(x, _per_channel([-m for m in mean], x, data_format))
    if std is not None:
        x = math_ops.divide(x, _per_channel(std, x, data_format))
    return x


def decode_predictions(preds, top=5):
    """The ``top`` classes of each row of ImageNet predictions, as
    ``[(class_name, description, score), ...]`` per example.

    The class index is ``imagenet_class_index.json`` in Keras's cache
    (``~/.keras/models/``): simdist downloads nothing (``tf.keras.utils.get_file``).

    Raises:
        ValueError: ``preds`` is not of shape ``(samples, 1000)``.
        ConnectionError: the class index is not in Keras's cache.
    """
    global _CLASS_INDEX
    preds = np.asarray(getattr(preds, "numpy", lambda: preds)())
    if len(preds.shape) != 2 or preds.shape[1] != 1000:
        raise ValueError(
            "`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape "
            f"(samples, 1000)). Found array with shape: {preds.shape}"
        )
    if _CLASS_INDEX is None:
        from simdist.keras.utils.refused import get_file

        path = get_file(
            "imagenet_class_index.json",
            CLASS_INDEX_PATH,
            cache_subdir="models",
            file_hash=_CLASS_INDEX_HASH,
        )
        with open(path) as f:
            _CLASS_INDEX = json.load(f)
    results = []
    for pred in preds:
        top_indices = pred.argsort()[-top:][::-1]
        result = [(*_CLASS_INDEX[str(i)], pred[i]) for i in top_indices]
        result.sort(key=lambda item: item[2], reverse=True)
        results.append(result)
    return results


# --- the builders' shape and argument rules -------------------------------------------------
def obtain_input_shape(
    input_shape, default_size: int, min_size: int, require_flatten: bool, weights=None
) -> tuple:
    """The model's input shape (channels_last) from the user's, with Keras 2's checks.

    ``None`` gives ``(default_size, default_size, 3)`` with a classifier on top
    (``require_flatten``), else ``(None, None, 3)``.

    Raises:
        ValueError: not three dimensions; a side below ``min_size``; not 3 channels with
            ImageNet weights; another shape than the default with ImageNet weights and the
            classifier; an unknown side with the classifier.
    """
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        if input_shape[-1] not in {1, 3}:
            warnings.warn(
                "This model usually expects 1 or 3 input channels. However, it was passed an "
                f"input_shape with {input_shape[-1]} input channels.",
                stacklevel=3,
            )
        default_shape = (default_size, default_size, input_shape[-1])
    else:
        default_shape = (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and input_shape != default_shape:
            raise ValueError(
                "When setting `include_top=True` and loading `imagenet` weights, "
                f"`input_shape` should be {default_shape}.  Received: input_shape={input_shape}"
            )
        return default_shape
    if input_shape:
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        if input_shape[-1] != 3 and weights == "imagenet":
            raise ValueError(
                f"The input must have 3 channels; Received `input_shape={input_shape}`"
            )
        rows, cols = input_shape[0], input_shape[1]
        if (rows is not None and rows < min_size) or (cols is not None and cols < min_size):
            raise ValueError(
                f"Input size must be at least {min_size}x{min_size}; Received: "
                f"input_shape={input_shape}"
            )
    else:
        input_shape = default_shape if require_flatten else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError(
            "If `include_top` is True, you should specify a static `input_shape`. Received: "
            f"input_shape={input_shape}"
        )
    return input_shape


def correct_pad(inputs, kernel_size) -> tuple[tuple[int, int], tuple[int, int]]:
    """The zero padding before a strided ``kernel_size`` convolution with ``'valid'`` padding
    that centres it as ``'same'`` would on an even side (one less row/column before)."""
    rows, cols = inputs.shape.as_list()[1:3]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if rows is None else (1 - rows % 2, 1 - cols % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


def validate_activation(classifier_activation, weights) -> None:
    """With pretrained ``weights``, the classifier's activation must be ``None`` or softmax.

    Raises:
        ValueError: another activation with weights.
    """
    if weights is None:
        return
    activation = activations.get(classifier_activation)
    if activation not in {activations.get("softmax"), activations.get(None)}:
        raise ValueError(
            "Only `None` and `softmax` activations are allowed for the `classifier_activation` "
            "argument when using pretrained weights, with `include_top=True`; Received: "
            f"classifier_activation={activation}"
        )
