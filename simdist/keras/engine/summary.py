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

(rows are padded with spaces to 65 columns; a field too long for its column continues on
the next line, and the counts have no thousands separators, as Keras 2 prints them). A
subclassed model's layer shapes are shown as ``multiple``, as Keras does; a Sequential
model's are propagated from its input shape. A Functional model lists its InputLayers
(shape ``[(None, 3)]``) and each layer's output shape from the graph; unless it is a plain
chain it is 98 columns wide with a fourth column, ``Connected to``, naming each input as
``layer[node][tensor]`` (a long list continues on the next lines, broken after each ``',``),
as Keras 2 prints it.
"""

from __future__ import annotations

import numpy as np

from simdist.core.shape import as_shape

__all__ = ["summary"]


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
    if hasattr(model, "_nodes") and not _sequential_like(model):
        _functional_summary(model, line_length, positions, print_fn or print)
        return
    width = line_length or 65
    cuts = positions or [0.45, 0.85, 1.0]
    if cuts[-1] <= 1:
        cuts = [int(width * p) for p in cuts]
    emit = print_fn or print
    emit(f'Model: "{model.name}"')
    emit("_" * width)
    for line in _wrapped_rows(["Layer (type)", "Output Shape", "Param #"], cuts):
        emit(line)
    emit("=" * width)
    shapes = _output_shapes(model)
    for layer, shape in zip(model.layers, shapes, strict=True):
        count = _count(layer.weights) if layer.built else 0
        for line in _wrapped_rows([f"{layer.name} ({type(layer).__name__})", shape, count], cuts):
            emit(line)
        emit(" " * width)
    emit("=" * width)
    _totals(model, width, emit)


def _totals(model, width: int, emit) -> None:
    trainable = _count(model.trainable_weights)
    total = _count(model.weights)
    emit(f"Total params: {total}")  # no thousands separators, as Keras 2 prints them
    emit(f"Trainable params: {trainable}")
    emit(f"Non-trainable params: {total - trainable}")
    emit("_" * width)


def _output_shapes(model) -> list[str]:
    if hasattr(model, "_nodes"):
        return [_graph_shape(model, layer) for layer in model.layers]
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


# --- Functional models ---------------------------------------------------------------------
def _model_nodes(model, layer) -> list:
    return [n for n in model._nodes if n.layer is layer]


def _sequential_like(model) -> bool:
    """A chain: one node per layer, each reading one tensor, one node per depth."""
    seen = set()
    for node in model._nodes:
        if id(node.layer) in seen or len(node.inbound_tensors) > 1:
            return False
        seen.add(id(node.layer))
    consumers: dict[int, int] = {}
    for node in model._nodes:
        for tensor in node.inbound_tensors:
            consumers[id(tensor)] = consumers.get(id(tensor), 0) + 1
    return all(count == 1 for count in consumers.values()) and len(model._flat_inputs) == 1


def _shape_text(tensors) -> str:
    shapes = [tuple(t.shape.as_list()) for t in tensors]
    return str(shapes[0]) if len(shapes) == 1 else str(shapes)


def _graph_shape(model, layer) -> str:
    from simdist.keras.engine.input_layer import InputLayer

    texts = {_shape_text(n.output_tensors) for n in _model_nodes(model, layer)}
    if len(texts) != 1:
        return "multiple"
    text = texts.pop()
    return f"[{text}]" if isinstance(layer, InputLayer) else text


def _connections(model, layer) -> list[str]:
    out = []
    for node in _model_nodes(model, layer):
        for tensor in node.inbound_tensors:
            source, node_index, tensor_index = tensor._keras_history
            out.append(f"{source.name}[{node_index}][{tensor_index}]")
    return out


def _wrapped_rows(fields, positions) -> list[str]:
    """One table row over as many lines as its fields need (Keras 2's ``print_row``)."""
    left = [str(f) for f in fields]
    lines = []
    while any(left):
        line = ""
        for col, text in enumerate(left):
            start = positions[col - 1] if col else 0
            last = col == len(positions) - 1
            space = 0 if last else 2
            cutoff = positions[col] - start - space - (0 if last else 1)
            piece = text[:cutoff]
            breaks = [piece.find(m) + len(m) for m in ("),", "},", "],", "',") if m in piece]
            if breaks:
                cutoff = min(breaks)
                piece = piece[:cutoff]
            line += (" " if col == 0 else "") + piece + " " * space
            left[col] = text[cutoff:]
            line += " " * (positions[col] - len(line))
        lines.append(line)
    return lines


def _functional_summary(model, line_length, positions, emit) -> None:
    width = line_length or 98
    cuts = positions or [0.3, 0.6, 0.70, 1.0]
    if cuts[-1] <= 1:
        cuts = [int(width * p) for p in cuts]
    emit(f'Model: "{model.name}"')
    emit("_" * width)
    for line in _wrapped_rows(["Layer (type)", "Output Shape", "Param #", "Connected to"], cuts):
        emit(line)
    emit("=" * width)
    for layer in model.layers:
        fields = [
            f"{layer.name} ({type(layer).__name__})",
            _graph_shape(model, layer),
            _count(layer.weights),
            _connections(model, layer),
        ]
        for line in _wrapped_rows(fields, cuts):
            emit(line)
        emit(" " * width)
    emit("=" * width)
    _totals(model, width, emit)
