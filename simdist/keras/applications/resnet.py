"""``tf.keras.applications.resnet``: ResNet50, ResNet101 and ResNet152 (He et al., "Deep Residual
Learning for Image Recognition", CVPR 2016), and the builder ResNetV2 shares.

The architecture is Keras 2's, layer by layer and name by name: ``conv1_pad``
(ZeroPadding2D 3), ``conv1_conv`` (7x7/2, 64), ``conv1_bn``, ``conv1_relu``, ``pool1_pad``,
``pool1_pool`` (3x3/2), four stacks ``conv2``..``conv5`` of bottleneck blocks, then
``avg_pool`` and ``predictions``. A v1 block ``convK_blockN`` is ``_1_conv`` (1x1, with the
block's stride) / ``_2_conv`` (3x3, ``same``) / ``_3_conv`` (1x1, 4x filters), each followed by
``_bn`` (BatchNormalization, epsilon 1.001e-5) and, but the last, ``_relu``; the first block of
a stack adds a ``_0_conv``/``_0_bn`` projection shortcut; ``_add`` and ``_out`` (ReLU) end it.
Convolutions have biases. (This is ResNet v1: the stride is on the first 1x1 convolution, not on
the 3x3 as in "v1.5", which ``simdist cost step --model resnet50`` prices.)

``preprocess_input`` is ``imagenet_utils.preprocess_input(mode="caffe")``.
"""

from __future__ import annotations

from simdist.keras.applications import _builder, imagenet_utils

__all__ = ["ResNet50", "ResNet101", "ResNet152", "preprocess_input", "decode_predictions"]

_EPSILON = 1.001e-5
_BN_AXIS = 3


def _layers_module(kwargs: dict):
    if "layers" in kwargs:
        return kwargs.pop("layers")
    from simdist.keras import layers

    return layers


def ResNet(
    stack_fn,
    preact: bool,
    use_bias: bool,
    model_name: str = "resnet",
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
    **kwargs,
):
    """A ResNet (v1 with ``preact=False``, v2 with ``preact=True``) around ``stack_fn(x,
    layers)``, which builds the residual stacks.

    Raises:
        ValueError: an unknown keyword argument; bad ``weights``, ``classes`` or
            ``input_shape`` (see ``imagenet_utils.obtain_input_shape``: at least 32x32).
        ConnectionError: ``weights="imagenet"`` (simdist downloads nothing).
    """
    layers = _layers_module(kwargs)
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    _builder.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32, require_flatten=include_top, weights=weights
    )
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
    _builder.refuse_imagenet(weights, model_name)
    img_input = _builder.image_input(input_tensor, input_shape)

    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = layers.BatchNormalization(axis=_BN_AXIS, epsilon=_EPSILON, name="conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x, layers)
    if preact:
        x = layers.BatchNormalization(axis=_BN_AXIS, epsilon=_EPSILON, name="post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = _builder.top_or_pooling(
        x, layers, include_top, pooling, classes, classifier_activation, named_pools=True
    )
    return _builder.make_model(img_input, input_tensor, x, model_name, weights)


def _bn(layers, name: str):
    return layers.BatchNormalization(axis=_BN_AXIS, epsilon=_EPSILON, name=name)


def block1(x, layers, filters: int, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    """A v1 bottleneck block (see the module docstring)."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = _bn(layers, name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = _bn(layers, name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="SAME", name=name + "_2_conv")(x)
    x = _bn(layers, name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = _bn(layers, name + "_3_bn")(x)
    x = layers.Add(name=name + "_add")([shortcut, x])
    return layers.Activation("relu", name=name + "_out")(x)


def stack1(x, layers, filters: int, blocks: int, stride1=2, name=None):
    """``blocks`` v1 blocks; the first projects the shortcut and strides by ``stride1``."""
    x = block1(x, layers, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = block1(x, layers, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def _v1_stacks(conv4_blocks: int, conv3_blocks: int = 4):
    def stack_fn(x, layers):
        x = stack1(x, layers, 64, 3, stride1=1, name="conv2")
        x = stack1(x, layers, 128, conv3_blocks, name="conv3")
        x = stack1(x, layers, 256, conv4_blocks, name="conv4")
        return stack1(x, layers, 512, 3, name="conv5")

    return stack_fn


def ResNet50(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    **kwargs,
):
    """ResNet50 (25,636,712 weights at 224x224 with the classifier).

    Args:
        include_top: the classifier (global average pooling + ``Dense(classes)``) on top.
        weights: ``None`` (random), ``"imagenet"`` (refused: simdist downloads nothing) or
            the path of a weights file.
        input_tensor: a Functional-API tensor to use as the image input.
        input_shape: ``(rows, cols, channels)``, sides at least 32; with the classifier it
            must be fully known (default ``(224, 224, 3)``).
        pooling: without the classifier, ``"avg"`` or ``"max"`` global pooling, or None.
        classes: classes of the classifier.
        classifier_activation: keyword, the classifier's activation (default softmax; None
            gives logits).

    Raises:
        ValueError: bad arguments, as Keras 2 checks them.
        ConnectionError: ``weights="imagenet"``.
    """
    return ResNet(
        _v1_stacks(6), False, True, "resnet50", include_top, weights, input_tensor,
        input_shape, pooling, classes, **kwargs,
    )  # fmt: skip


def ResNet101(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    **kwargs,
):
    """ResNet101 (44,707,176 weights with the classifier); the arguments of ``ResNet50``."""
    return ResNet(
        _v1_stacks(23), False, True, "resnet101", include_top, weights, input_tensor,
        input_shape, pooling, classes, **kwargs,
    )  # fmt: skip


def ResNet152(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    **kwargs,
):
    """ResNet152 (60,419,944 weights with the classifier); the arguments of ``ResNet50``."""
    return ResNet(
        _v1_stacks(36, conv3_blocks=8), False, True, "resnet152", include_top, weights,
        input_tensor, input_shape, pooling, classes, **kwargs,
    )  # fmt: skip


def preprocess_input(x, data_format=None):
    """ResNet's preprocessing: RGB -> BGR, minus the ImageNet mean per channel, no scaling
    (``imagenet_utils.preprocess_input(mode="caffe")``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds, top=5):
    """``imagenet_utils.decode_predictions``."""
    return imagenet_utils.decode_predictions(preds, top=top)
