"""``Model.summary()``: the Keras 2 table of layers, output shapes and parameter counts.

::

    Model: "sequential"
    _________________________________________________________________
     Layer (type)                Output Shape              Param #
    =================================================================
     dense (Dense)               (None, 1)                 2
    <blank row>
    =================================================================
    Total params: 2
    Trainable params: 2
    Non-trainable params: 0
    _________________________________________________________________

(rows are padded with spaces to 65 columns). A subclassed model's layer shapes are shown as
``multiple``, as Keras does; a Sequential model's are propagated from its input shape.
"""

from __future__ import annotations

import numpy as np

from simdist.core.shape import as_shape

__all__ = ["summary"]


def _row(fields, positions) -> str:
    line, start = " ", 0
    for col, (field, end) in enumerate(zip(fields, positions, strict=True)):
        space = 2 if col != len(positions) - 1 else 0
        line += str(field)[: end - start - space] + " " * space
        line += " " * (end - len(line))
        start = end
    return line


def _count(weights) -> int:
    seen, total = set(), 0
    for w in weights:
        if id(w) not in seen:
            seen.add(id(w))
            total += int(np.prod(tuple(w.shape)))
    return total


def summary(model, line_length=None, positions=None, print_fn=None) -> None:
    """Print (or pass each line to ``print_fn``) the summary table of ``model``.

    Raises:
        ValueError: the model is not built yet.
    """
    if not model.built:
        raise ValueError(
            "This model has not yet been built. Build the model first by calling `build()` or "
            "by calling the model on a batch of data."
        )
    width = line_length or 65
    cuts = positions or [0.45, 0.85, 1.0]
    if cuts[-1] <= 1:
        cuts = [int(width * p) for p in cuts]
    emit = print_fn or print
    emit(f'Model: "{model.name}"')
    emit("_" * width)
    emit(_row(["Layer (type)", "Output Shape", "Param #"], cuts))
    emit("=" * width)
    shapes = _output_shapes(model)
    for layer, shape in zip(model.layers, shapes, strict=True):
        count = _count(layer.weights) if layer.built else 0
        emit(_row([f"{layer.name} ({type(layer).__name__})", shape, count], cuts))
        emit(" " * width)
    emit("=" * width)
    trainable = _count(model.trainable_weights)
    total = _count(model.weights)
    emit(f"Total params: {total:,}")
    emit(f"Trainable params: {trainable:,}")
    emit(f"Non-trainable params: {total - trainable:,}")
    emit("_" * width)


def _output_shapes(model) -> list[str]:
    shape = getattr(model, "_batch_input_shape", None)
    layers = model.layers
    if shape is None or not hasattr(model, "_stack"):
        return ["multiple"] * len(layers)
    out = []
    shape = as_shape(shape)
    for layer in layers:
        shape = as_shape(layer.compute_output_shape(shape))
        out.append(str(tuple(shape.as_list())))
    return out
