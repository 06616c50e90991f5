"""``tf.keras.applications.resnet_v2``: ResNet50V2, ResNet101V2, ResNet152V2 (He et al.,
"Identity Mappings in Deep Residual Networks", ECCV 2016), as Keras 2 builds them.

Pre-activation blocks: ``convK_blockN_preact_bn`` / ``_preact_relu`` first; the shortcut is a
``_0_conv`` projection of the pre-activation in a stack's first block, else the block's input
(through an unnamed ``MaxPooling2D(1, strides=2)`` in a stack's last, strided, block); then
``_1_conv`` (1x1, no bias) / ``_2_pad`` + ``_2_conv`` (3x3 with the stride, no bias), each with
``_bn`` and ``_relu``, ``_3_conv`` (1x1, bias) and ``_out`` (Add). No BatchNormalization after
``conv1_conv``; ``post_bn`` / ``post_relu`` before the head. The unnamed pooling layers are
``max_pooling2d``, ``max_pooling2d_1``... (Keras's name counters: ``tf.keras.backend.
clear_session()`` restarts them).

``preprocess_input`` is ``imagenet_utils.preprocess_input(mode="tf")``: pixels to [-1, 1].
"""

from __future__ import annotations

from simdist.keras.applications import imagenet_utils
from simdist.keras.applications.resnet import ResNet, _bn

__all__ = ["ResNet50V2", "ResNet101V2", "ResNet152V2", "preprocess_input", "decode_predictions"]


def block2(x, layers, filters: int, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    """A v2 (pre-activation) bottleneck block (see the module docstring)."""
    preact = _bn(layers, name + "_preact_bn")(x)
    preact = layers.Activation("relu", name=name + "_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=name + "_1_conv")(preact)
    x = _bn(layers, name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=name + "_2_pad")(x)
    x = layers.Conv2D(
        filters, kernel_size, strides=stride, use_bias=False, name=name + "_2_conv"
    )(x)
    x = _bn(layers, name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    return layers.Add(name=name + "_out")([shortcut, x])


def stack2(x, layers, filters: int, blocks: int, stride1=2, name=None):
    """``blocks`` v2 blocks: the first projects the shortcut, the last strides by ``stride1``."""
    x = block2(x, layers, filters, conv_shortcut=True, name=name + "_block1")
    for i in range(2, blocks):
        x = block2(x, layers, filters, name=f"{name}_block{i}")
    return block2(x, layers, filters, stride=stride1, name=f"{name}_block{blocks}")


def _v2_stacks(conv4_blocks: int, conv3_blocks: int = 4):
    def stack_fn(x, layers):
        x = stack2(x, layers, 64, 3, name="conv2")
        x = stack2(x, layers, 128, conv3_blocks, name="conv3")
        x = stack2(x, layers, 256, conv4_blocks, name="conv4")
        return stack2(x, layers, 512, 3, stride1=1, name="conv5")

    return stack_fn


def ResNet50V2(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
):
    """ResNet50V2 (25,613,800 weights at 224x224 with the classifier); the arguments of
    ``tf.keras.applications.ResNet50``.

    Raises:
        ValueError: bad arguments, as Keras 2 checks them.
        ConnectionError: ``weights="imagenet"``.
    """
    return ResNet(
        _v2_stacks(6), True, True, "resnet50v2", include_top, weights, input_tensor,
        input_shape, pooling, classes, classifier_activation=classifier_activation,
    )  # fmt: skip


def ResNet101V2(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
):
    """ResNet101V2 (44,675,560 weights with the classifier); see ``ResNet50V2``."""
    return ResNet(
        _v2_stacks(23), True, True, "resnet101v2", include_top, weights, input_tensor,
        input_shape, pooling, classes, classifier_activation=classifier_activation,
    )  # fmt: skip


def ResNet152V2(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
):
    """ResNet152V2 (60,380,648 weights with the classifier); see ``ResNet50V2``."""
    return ResNet(
        _v2_stacks(36, conv3_blocks=8), True, True, "resnet152v2", include_top, weights,
        input_tensor, input_shape, pooling, classes, classifier_activation=classifier_activation,
    )  # fmt: skip


def preprocess_input(x, data_format=None):
    """ResNetV2\'s preprocessing: ``x / 127.5 - 1``, pixels to [-1, 1]
    (``imagenet_utils.preprocess_input(mode="tf")``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    """``imagenet_utils.decode_predictions``."""
    return imagenet_utils.decode_predictions(preds, top=top)
