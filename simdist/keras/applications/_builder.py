"""What every application builder shares: the ``weights`` argument, the image input, the
classifier or pooling head, and making the model (then loading a weights file).

``weights`` is ``None`` (random initialization), ``"imagenet"`` or the path of an existing
weights file, checked as Keras 2 checks it (``ValueError`` otherwise). simdist reaches no
network, so ``"imagenet"`` raises ``ConnectionError`` once every other argument has passed
Keras's checks, before any layer is made: pass ``weights=None``, or the path of weights you
saved with ``save_weights`` (what simdist's ``load_weights`` reads). A path is loaded into the
built model with ``model.load_weights(path)``.
"""

from __future__ import annotations

import os

from simdist.core.tensor import Tensor
from simdist.core.variables import Variable
from simdist.keras.engine.input_layer import Input
from simdist.keras.engine.keras_tensor import KerasTensor
from simdist.keras.engine.training import Model

__all__ = [
    "check_weights",
    "refuse_imagenet",
    "image_input",
    "is_keras_tensor",
    "source_inputs",
    "top_or_pooling",
    "make_model",
]


def check_weights(weights, include_top: bool, classes) -> None:
    """Keras 2's checks of ``weights`` and of ``classes`` with ImageNet weights.

    Raises:
        ValueError: ``weights`` is neither None, ``"imagenet"`` nor an existing path; or
            ImageNet weights with the classifier and ``classes != 1000``.
    """
    if not (weights in {"imagenet", None} or _exists(weights)):
        raise ValueError(
            "The `weights` argument should be either `None` (random initialization), "
            "`imagenet` (pre-training on ImageNet), or the path to the weights file to be "
            f"loaded.  Received: weights={weights}"
        )
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(
            'If using `weights` as `"imagenet"` with `include_top` as true, `classes` should '
            f"be 1000.  Received: classes={classes}"
        )


def _exists(path) -> bool:
    try:
        return os.path.exists(os.fspath(path))
    except TypeError:
        return False


def refuse_imagenet(weights, model_name: str) -> None:
    """``weights="imagenet"``: the ConnectionError that says what to do instead."""
    if weights == "imagenet":
        raise ConnectionError(
            f"simdist does not download files, so it cannot load the ImageNet weights of "
            f"{model_name}. Pass weights=None for a randomly initialised model, or "
            "weights='<path>' for weights you have saved with simdist's save_weights "
            "(model.load_weights(path) after building does the same)."
        )


def is_keras_tensor(value) -> bool:
    """Whether ``value`` is a symbolic Functional-API tensor (Keras's ``is_keras_tensor``).

    Raises:
        ValueError: ``value`` is not a tensor at all.
    """
    if isinstance(value, KerasTensor):
        return True
    if isinstance(value, (Tensor, Variable)):
        return False
    raise ValueError(
        f"Unexpectedly found an instance of type `{type(value)}`. Expected a symbolic tensor "
        "instance."
    )


def image_input(input_tensor, input_shape):
    """The model's image input: ``Input(input_shape)``, or the user's ``input_tensor``."""
    if input_tensor is None:
        return Input(shape=input_shape)
    if not is_keras_tensor(input_tensor):
        return Input(tensor=input_tensor, shape=input_shape)  # raises: not yet in simdist
    return input_tensor


def source_inputs(tensor: KerasTensor):
    """The ``Input`` tensors ``tensor`` is computed from (one tensor when there is one)."""
    found, seen, stack = [], set(), [tensor]
    while stack:
        current = stack.pop()
        node = current.node
        if not node.inbound_tensors:  # an InputLayer's tensor
            if id(current) not in seen:
                seen.add(id(current))
                found.append(current)
            continue
        stack.extend(reversed(node.inbound_tensors))
    return found[0] if len(found) == 1 else found


def top_or_pooling(x, layers, include_top, pooling, classes, classifier_activation,
                   named_pools: bool = False):
    """The classifier (global average pooling + ``Dense(classes)`` named ``predictions``) or,
    without it, the optional ``pooling`` (``"avg"``/``"max"``; anything else: none). The
    pooling layers are ``avg_pool``/``max_pool`` with ``named_pools`` (ResNet), else they
    take their default names."""
    avg_name, max_name = ("avg_pool", "max_pool") if named_pools else (None, None)
    if include_top:
        x = layers.GlobalAveragePooling2D(name=avg_name)(x)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=avg_name)(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=max_name)(x)
    return x


def make_model(img_input, input_tensor, outputs, name: str, weights):
    """The Functional model from the image input (or ``input_tensor``'s own inputs) to
    ``outputs``; a weights path is loaded into it."""
    inputs = source_inputs(input_tensor) if input_tensor is not None else img_input
    model = Model(inputs, outputs, name=name)
    if weights is not None:
        model.load_weights(weights)
    return model
