"""``tf.keras.applications.vgg19``: VGG19 (blocks of 2, 2, 4, 4, 4 convolutions; see ``_vgg``).

``preprocess_input`` is ``imagenet_utils.preprocess_input(mode="caffe")``.
"""

from __future__ import annotations

from simdist.keras.applications import imagenet_utils
from simdist.keras.applications._vgg import vgg

__all__ = ["VGG19", "preprocess_input", "decode_predictions"]


def VGG19(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
):
    """VGG19 (143,667,240 weights at 224x224 with the classifier); the arguments of
    ``tf.keras.applications.ResNet50`` (with the classifier, ``input_shape`` sets the size
    of ``fc1``'s input: 7x7x512 at 224x224).

    Raises:
        ValueError: bad arguments, as Keras 2 checks them.
        ConnectionError: ``weights="imagenet"`` (simdist downloads nothing).
    """
    return vgg(
        (2, 2, 4, 4, 4), "vgg19", include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation,
    )


def preprocess_input(x, data_format=None):
    """VGG's preprocessing: RGB -> BGR, minus the ImageNet mean per channel, no scaling
    (``imagenet_utils.preprocess_input(mode="caffe")``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds, top=5):
    """``imagenet_utils.decode_predictions``."""
    return imagenet_utils.decode_predictions(preds, top=top)
