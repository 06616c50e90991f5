"""``tf.keras.applications.mobilenet_v2``: MobileNetV2 (Sandler et al., "MobileNetV2: Inverted
Residuals and Linear Bottlenecks", CVPR 2018), as Keras 2 builds it.

``Conv1`` (3x3/2, ``same``, no bias) / ``bn_Conv1`` / ``Conv1_relu`` (ReLU capped at 6), then 17
inverted residual blocks, ``Conv_1`` (1x1 to 1280 channels, more when ``alpha > 1``) /
``Conv_1_bn`` / ``out_relu``, then the head (unnamed global pooling, ``predictions``). Block
``block_{i}_`` (``expanded_conv_`` for block 0, which does not expand): ``expand`` (1x1 to 6x
the input channels) / ``expand_BN`` / ``expand_relu``; for stride 2 ``pad`` (ZeroPadding2D by
``imagenet_utils.correct_pad``) then a ``valid`` ``depthwise`` (3x3), else a ``same`` one;
``depthwise_BN`` / ``depthwise_relu``; ``project`` (1x1, linear) / ``project_BN``; ``add`` when
the block keeps its shape. BatchNormalization: epsilon 1e-3, momentum 0.999. ``alpha`` scales
every width, rounded to a multiple of 8 (``_make_divisible``). The model is named
``mobilenetv2_{alpha:.2f}_{rows}``.

``preprocess_input`` is ``imagenet_utils.preprocess_input(mode="tf")``: pixels to [-1, 1].
"""

from __future__ import annotations

from simdist.keras.applications import _builder, imagenet_utils

__all__ = ["MobileNetV2", "preprocess_input", "decode_predictions"]

_IMAGENET_SIZES = (96, 128, 160, 192, 224)
_IMAGENET_ALPHAS = (0.35, 0.50, 0.75, 1.0, 1.3, 1.4)
# (filters, stride, expansion) of blocks 0..16
_BLOCKS = (
    (16, 1, 1),
    (24, 2, 6), (24, 1, 6),
    (32, 2, 6), (32, 1, 6), (32, 1, 6),
    (64, 2, 6), (64, 1, 6), (64, 1, 6), (64, 1, 6),
    (96, 1, 6), (96, 1, 6), (96, 1, 6),
    (160, 2, 6), (160, 1, 6), (160, 1, 6),
    (320, 1, 6),
)  # fmt: skip


def _default_size(rows, cols) -> int:
    return rows if rows == cols and rows in _IMAGENET_SIZES else 224


def _input_default_size(input_shape, input_tensor) -> int:
    """Keras 2's default side: the given square ImageNet size, else 224; with both
    ``input_shape`` and ``input_tensor`` they must agree (``ValueError``)."""
    if input_shape is not None and input_tensor is not None:
        if not _builder.is_keras_tensor(input_tensor):
            raise ValueError(
                f"input_tensor is not a TF-Keras tensor; Received `input_tensor={input_tensor}`"
            )
        if input_tensor.shape.as_list()[2] != input_shape[1]:
            raise ValueError(
                "input_tensor.shape[2] must equal input_shape[1]; Received "
                f"`input_tensor.shape={input_tensor.shape}`, `input_shape={input_shape}`"
            )
    if input_shape is None and input_tensor is not None:
        if not _builder.is_keras_tensor(input_tensor):
            return 224
        rows, cols = input_tensor.shape.as_list()[1:3]
        return _default_size(rows, cols)
    if input_shape is None:
        return 224
    return _default_size(input_shape[0], input_shape[1])


def MobileNetV2(
    input_shape=None,
    alpha=1.0,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    **kwargs,
):
    """MobileNetV2 (3,538,984 weights at alpha 1.0 with the classifier).

    Args:
        input_shape: ``(rows, cols, channels)``, sides at least 32 (default ``(224, 224,
            3)`` with the classifier, else any size).
        alpha: the width multiplier (> 0; ImageNet weights exist for 0.35, 0.5, 0.75, 1.0,
            1.3 and 1.4).
        include_top, weights, input_tensor, pooling, classes, classifier_activation: as
            ``tf.keras.applications.ResNet50``.

    Raises:
        ValueError: an unknown keyword argument, and bad arguments as Keras 2 checks them.
        ConnectionError: ``weights="imagenet"`` (simdist downloads nothing).
    """
    from simdist.keras import layers as default_layers

    layers = kwargs.pop("layers", default_layers)
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    _builder.check_weights(weights, include_top, classes)
    default_size = _input_default_size(input_shape, input_tensor)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=default_size, min_size=32, require_flatten=include_top,
        weights=weights,
    )  # fmt: skip
    rows = input_shape[0]
    if weights == "imagenet":
        if alpha not in _IMAGENET_ALPHAS:
            raise ValueError(
                "If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, "
                f"`0.75`, `1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`"
            )
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
    _builder.refuse_imagenet(weights, "MobileNetV2")
    img_input = _builder.image_input(input_tensor, input_shape)

    x = layers.Conv2D(
        _make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same",
        use_bias=False, name="Conv1",
    )(img_input)  # fmt: skip
    x = _bn(layers, "bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(
            x, layers, expansion=expansion, stride=stride, alpha=alpha, filters=filters,
            block_id=block_id,
        )  # fmt: skip
    # the last convolution is not narrowed by alpha < 1 (as in the paper), widened by alpha > 1
    last_block_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_block_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = _bn(layers, "Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = _builder.top_or_pooling(x, layers, include_top, pooling, classes, classifier_activation)
    return _builder.make_model(img_input, input_tensor, x, f"mobilenetv2_{alpha:0.2f}_{rows}",
                               weights)


def _bn(layers, name: str):
    return layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)


def _inverted_res_block(inputs, layers, expansion: int, stride: int, alpha: float,
                        filters: int, block_id: int):
    """One inverted residual block (see the module docstring)."""
    in_channels = inputs.shape.as_list()[-1]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(
            expansion * in_channels, kernel_size=1, padding="same", use_bias=False,
            activation=None, name=prefix + "expand",
        )(x)  # fmt: skip
        x = _bn(layers, prefix + "expand_BN")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(
            padding=imagenet_utils.correct_pad(x, 3), name=prefix + "pad"
        )(x)
    x = layers.DepthwiseConv2D(
        kernel_size=3, strides=stride, activation=None, use_bias=False,
        padding="same" if stride == 1 else "valid", name=prefix + "depthwise",
    )(x)  # fmt: skip
    x = _bn(layers, prefix + "depthwise_BN")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(x)
    x = layers.Conv2D(
        pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
        name=prefix + "project",
    )(x)  # fmt: skip
    x = _bn(layers, prefix + "project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


def _make_divisible(v, divisor: int, min_value=None) -> int:
    """``v`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``, and not
    more than 10% below ``v``)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def preprocess_input(x, data_format=None):
    """MobileNetV2\'s preprocessing: ``x / 127.5 - 1``, pixels to [-1, 1]
    (``imagenet_utils.preprocess_input(mode="tf")``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    """``imagenet_utils.decode_predictions``."""
    return imagenet_utils.decode_predictions(preds, top=top)
