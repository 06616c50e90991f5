"""The Functional API: ``tf.keras.Model(inputs, outputs)`` over a graph of layer calls.

``Model(inputs, outputs)`` (inputs and outputs: KerasTensors, or lists/dicts of them) walks
back from the outputs to the inputs through the recorded :class:`Node` s. The nodes run in
Keras 2's order: deepest first (depth = the longest path to an output), ties in the order a
depth-first walk from the outputs finishes them. ``model.layers`` lists each layer once in
that order, InputLayers included. Calling the model on tensors runs the nodes, each layer on
the values its node recorded; ``training`` reaches every layer that does not fix its own.
The model is a layer: called on KerasTensors it becomes one node of a bigger graph, and the
same layer object may appear in several nodes (shared weights).

Raises at construction: ``ValueError`` "Graph disconnected" when an output needs an input
that is not among ``inputs``, and when an input is not an ``Input`` tensor.
"""

from __future__ import annotations

from simdist.core import nest
from simdist.core.shape import TensorShape
from simdist.keras.engine.input_layer import InputLayer
from simdist.keras.engine.keras_tensor import KerasTensor
from simdist.keras.engine.training import Model
from simdist.keras.object_registration import with_custom_objects

__all__ = ["Functional"]


def _check_tensors(structure, what: str) -> list[KerasTensor]:
    flat = nest.flatten(structure)
    for item in flat:
        if not isinstance(item, KerasTensor) or item._keras_history is None:
            raise ValueError(
                f"Model {what} must come from `tf.keras.Input` or from calling a Keras layer "
                f"on such tensors. Received: {item!r}"
            )
    return flat


def graph_nodes(inputs: list[KerasTensor], outputs: list[KerasTensor]) -> list:
    """The nodes between ``inputs`` and ``outputs``, in running order (see the docstring).

    Raises:
        ValueError: an output depends on a tensor that no input provides.
    """
    input_nodes = {id(t.node): t.node for t in inputs}
    finished: list = []  # depth-first post-order: every node after the nodes it reads
    seen: set[int] = set()
    for output in outputs:
        stack = [(output.node, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                finished.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            if not node.inbound_tensors and id(node) not in input_nodes:
                raise ValueError(
                    f"Graph disconnected: cannot obtain value for tensor {node.outputs!r} at "
                    f"layer '{node.layer.name}'. The following previous layers were accessed "
                    f"without issue: {[n.layer.name for n in finished]}"
                )
            stack.append((node, True))
            if id(node) in input_nodes:
                continue
            for parent in reversed(node.parent_nodes):
                if id(parent) not in seen:
                    stack.append((parent, False))
    for node in input_nodes.values():  # an input no output reads is still an input
        if id(node) not in seen:
            seen.add(id(node))
            finished.insert(0, node)
    depth = {id(n): 0 for n in finished}
    for node in reversed(finished):  # consumers before producers
        if id(node) in input_nodes:
            continue
        for parent in node.parent_nodes:
            depth[id(parent)] = max(depth[id(parent)], depth[id(node)] + 1)
    order = {id(n): i for i, n in enumerate(finished)}
    return sorted(finished, key=lambda n: (-depth[id(n)], order[id(n)]))


class Functional(Model):
    """A model defined by its input and output tensors (``tf.keras.Model(inputs, outputs)``).

    Raises:
        ValueError: inputs that are not ``tf.keras.Input`` tensors, or a disconnected graph.
    """

    @classmethod
    def _default_name(cls) -> str:
        return "model"  # Keras 2 names Functional models model, model_1...

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs) -> None:
        super().__init__(name=name, trainable=trainable, **kwargs)
        flat_inputs = _check_tensors(inputs, "inputs")
        flat_outputs = _check_tensors(outputs, "outputs")
        for tensor in flat_inputs:
            if not isinstance(tensor._keras_history[0], InputLayer):
                raise ValueError(
                    "Input tensors to a Functional model must come from `tf.keras.Input`. "
                    f"Received: {tensor!r} (missing previous layer metadata)."
                )
        nodes = graph_nodes(flat_inputs, flat_outputs)
        put = object.__setattr__
        put(self, "_nested_inputs", inputs)
        put(self, "_nested_outputs", outputs)
        put(self, "_flat_inputs", flat_inputs)
        put(self, "_flat_outputs", flat_outputs)
        put(self, "_nodes", nodes)
        layers = []
        for node in nodes:
            if not any(x is node.layer for x in layers):
                layers.append(node.layer)
        self._graph_layers = layers  # tracked: the model's weights are its layers' weights
        put(self, "built", True)
        put(self, "_build_input_shape", nest.map_structure(lambda t: t.shape, inputs))

    # --- structure -----------------------------------------------------------------------
    @property
    def layers(self) -> list:
        return list(self._graph_layers)

    @property
    def inputs(self) -> list:
        return list(self._flat_inputs)

    @property
    def outputs(self) -> list:
        return list(self._flat_outputs)

    @property
    def input(self):
        return self._nested_inputs

    @property
    def output(self):
        return self._nested_outputs

    @property
    def input_names(self) -> list[str]:
        return [t._keras_history[0].name for t in self._flat_inputs]

    @property
    def output_names(self) -> list[str]:
        return [t._keras_history[0].name for t in self._flat_outputs]

    @property
    def input_shape(self):
        shapes = [tuple(t.shape.as_list()) for t in self._flat_inputs]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self):
        shapes = [tuple(t.shape.as_list()) for t in self._flat_outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    def build(self, input_shape=None) -> None:
        """A Functional model is built when it is made."""

    # --- running -------------------------------------------------------------------------
    def _input_values(self, inputs) -> list:
        nested = self._nested_inputs
        if isinstance(nested, dict) or (isinstance(inputs, dict) and len(self._flat_inputs) > 1):
            if not isinstance(inputs, dict):
                raise ValueError(
                    f"Model '{self.name}' expects a dict of inputs with keys "
                    f"{sorted(nested) if isinstance(nested, dict) else self.input_names}; got "
                    f"{type(inputs).__name__}."
                )
            names = sorted(nested) if isinstance(nested, dict) else None
            tensors = [nested[k] for k in names] if names else self._flat_inputs
            keys = names or self.input_names
            missing = [k for k in keys if k not in inputs]
            if missing:
                raise ValueError(
                    f"Missing data for input(s) {missing} of model '{self.name}'. Expected "
                    f"keys: {keys}; got {sorted(inputs)}."
                )
            return list(zip(tensors, [inputs[k] for k in keys], strict=True))
        if len(self._flat_inputs) == 1 and isinstance(inputs, dict):
            (value,) = inputs.values()
            return [(self._flat_inputs[0], value)]
        flat = nest.flatten(inputs) if len(self._flat_inputs) > 1 else [inputs]
        if len(flat) != len(self._flat_inputs):
            raise ValueError(
                f'Layer "{self.name}" expects {len(self._flat_inputs)} input(s), but it '
                f"received {len(flat)} input tensors."
            )
        return list(zip(self._flat_inputs, flat, strict=True))

    def call(self, inputs, training=None, mask=None):
        values: dict[int, object] = {}
        for tensor, value in self._input_values(inputs):
            expected = tensor.shape
            got = TensorShape(getattr(value, "shape", ()))
            if (
                expected.rank is not None
                and got.rank is not None
                and (got.rank != expected.rank or not expected.is_compatible_with(got))
            ):
                raise ValueError(
                    f'Input 0 of layer "{self.name}" is incompatible with the layer: expected '
                    f"shape={tuple(expected.as_list())}, found shape={tuple(got.as_list())}"
                )
            values[id(tensor)] = value
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            node.run(values, training=training)
        return nest.map_structure(lambda t: values[id(t)], self._nested_outputs)

    def compute_output_shape(self, input_shape):
        shapes = [t.shape for t in self._flat_outputs]
        return shapes[0] if len(shapes) == 1 else shapes

    def get_config(self) -> dict:
        from simdist.keras import model_config

        return model_config.functional_config(self)

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        from simdist.keras import model_config

        classes = {**model_config.builtin_layers(), **with_custom_objects(custom_objects)}
        return model_config.functional_from_config(config, classes, "the config")
