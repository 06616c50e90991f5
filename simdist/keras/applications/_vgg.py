"""The VGG builder that ``vgg16`` and ``vgg19`` share (Simonyan & Zisserman, "Very Deep
Convolutional Networks for Large-Scale Image Recognition", ICLR 2015), as Keras 2 builds it.

Five blocks ``block{b}_conv{i}`` (3x3 ``same`` convolutions with ReLU; 64, 128, 256, 512, 512
filters) each closed by ``block{b}_pool`` (2x2/2 max pooling); with the classifier ``flatten``,
``fc1`` and ``fc2`` (Dense 4096, ReLU) and ``predictions``; without it the optional unnamed
global pooling.
"""

from __future__ import annotations

from simdist.keras.applications import _builder, imagenet_utils

__all__ = ["vgg"]

_FILTERS = (64, 128, 256, 512, 512)


def vgg(
    convs_per_block: tuple[int, ...],
    model_name: str,
    include_top,
    weights,
    input_tensor,
    input_shape,
    pooling,
    classes,
    classifier_activation,
):
    """A VGG with ``convs_per_block[b]`` convolutions in block ``b + 1``.

    Raises:
        ValueError: bad arguments, as Keras 2 checks them.
        ConnectionError: ``weights="imagenet"`` (simdist downloads nothing).
    """
    from simdist.keras import layers

    _builder.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(
        input_shape, default_size=224, min_size=32, require_flatten=include_top, weights=weights
    )
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
    _builder.refuse_imagenet(weights, model_name.upper())
    img_input = _builder.image_input(input_tensor, input_shape)
    x = img_input
    for block, (filters, convs) in enumerate(zip(_FILTERS, convs_per_block, strict=True), 1):
        for i in range(1, convs + 1):
            x = layers.Conv2D(
                filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{i}"
            )(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    return _builder.make_model(img_input, input_tensor, x, model_name, weights)
