"""A Functional model's config in Keras 2's schema: layers with their ``inbound_nodes``.

``functional_config(model)`` writes, and ``functional_from_config`` reads, what tf_keras's
``Functional.get_config()`` holds (so a config written by tf_keras loads here):

* ``name``, ``trainable``, ``layers`` (each ``{"class_name", "config", "name",
  "inbound_nodes"}``; tf_keras's ``module``, ``registered_name`` and ``build_config`` are
  accepted on reading and not written), ``input_layers`` and ``output_layers``
  (``[layer, node, tensor]`` each, in the structure of the model's inputs/outputs; a single
  one in a list).
* One inbound node per call of the layer in this model. A call's first argument is written
  tensor by tensor, each ``[layer, node, tensor, kwargs]`` (a constant as
  ``["_CONSTANT_VALUE", -1, value, kwargs]``); the other positional arguments are named after
  the layer's ``call`` parameters (the op's for an op layer) and joined to ``kwargs``, where a
  tensor is ``[layer, node, tensor]`` and a constant tensor its list of values. A layer that
  does not keep its input structure (all but op layers) has its first argument wrapped in a
  list when it is one tensor.
* ``node`` counts the layer's calls in this model, from 1 for a nested Functional model (its
  own graph is node 0, as in Keras 2), from 0 for the others.

Reading rebuilds the layers in order and calls each on its nodes' inputs, leaving a node for
a later pass while a tensor it needs is not made yet (Keras 2's queue).
"""

from __future__ import annotations

import inspect
import json

import numpy as np

from simdist import errors
from simdist.core import nest
from simdist.core.tensor import Tensor

__all__ = ["functional_config", "functional_from_config", "is_keras_schema", "CONSTANT_VALUE"]

CONSTANT_VALUE = "_CONSTANT_VALUE"
_ELLIPSIS = {"class_name": "__ellipsis__"}


def is_keras_schema(config) -> bool:
    """Whether ``config`` is a Functional config in Keras 2's schema (not simdist's older one)."""
    return isinstance(config, dict) and {"layers", "input_layers", "output_layers"} <= set(config)


def _skips_first_node(layer) -> bool:
    from simdist.keras.engine.functional import Functional
    from simdist.keras.engine.sequential import Sequential

    if isinstance(layer, Functional):
        return True
    return isinstance(layer, Sequential) and layer._input_layer is not None


def _preserves_structure(layer) -> bool:
    from simdist.keras.layers.tf_op_layer import TFOpLambda

    return isinstance(layer, TFOpLambda)


def _call_arg_names(layer) -> list[str]:
    from simdist.keras.layers.tf_op_layer import TFOpLambda

    call = layer.function if isinstance(layer, TFOpLambda) else layer.call
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(call).parameters.values() if p.kind in kinds]


# --- writing ---------------------------------------------------------------------------------
class _Writer:
    def __init__(self, model) -> None:
        self.model = model
        self.node_index = {}  # id(node) -> its index in the config
        calls: dict[int, int] = {}
        for node in model._nodes:
            layer = node.layer
            k = calls.get(id(layer), 1 if _skips_first_node(layer) else 0)
            calls[id(layer)] = k + 1
            self.node_index[id(node)] = k

    def reference(self, tensor) -> list:
        layer, _, tensor_index = tensor._keras_history
        return [layer.name, self.node_index[id(tensor.node)], tensor_index]

    def constant(self, value):
        from simdist.keras.engine.keras_tensor import KerasTensor

        if isinstance(value, KerasTensor):
            return self.reference(value)
        if isinstance(value, np.ndarray):
            return value.tolist()
        if isinstance(value, Tensor):
            return value.numpy().tolist()
        return value

    def node(self, node) -> object:
        from simdist.keras.engine.keras_tensor import KerasTensor

        layer = node.layer
        args, kwargs = list(node.call_args), dict(node.call_kwargs)
        names = _call_arg_names(layer)
        if args:
            inputs = args.pop(0)
        elif names and names[0] in kwargs:
            inputs = kwargs.pop(names[0])
        else:
            raise ValueError(f"Layer {layer.name} was called without its first argument.")
        arguments = dict(zip(names[1:], args, strict=False))
        arguments.update(kwargs)
        arguments = nest.map_structure(self.constant, arguments)
        try:
            json.dumps(arguments, default=json_default)
        except TypeError:
            kinds = nest.map_structure(type, arguments)
            raise TypeError(
                f"Layer {layer.name} was passed non-JSON-serializable arguments (their types: "
                f"{kinds}), which a model config cannot hold. Pass tensors, numbers, strings "
                "or lists of them (a tf.Variable belongs in a layer's weights)."
            ) from None

        def first(value):
            if isinstance(value, KerasTensor):
                return [*self.reference(value), arguments]
            return [CONSTANT_VALUE, -1, self.constant(value), arguments]

        data = nest.map_structure(first, inputs)
        if not isinstance(inputs, (list, tuple, dict)) and not _preserves_structure(layer):
            data = [data]
        return data

    def endpoints(self, structure):
        refs = nest.map_structure(self.reference, structure)
        return refs if isinstance(structure, (list, tuple, dict)) else [refs]


def json_default(value):
    """JSON for what a call's arguments may hold: an Ellipsis, a dtype (by name)."""
    from simdist.core import dtypes

    if value is Ellipsis:
        return dict(_ELLIPSIS)
    if isinstance(value, dtypes.DType):
        return value.name
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{value!r} of type {type(value).__name__} is not JSON serializable")


def functional_config(model, layer_config) -> dict:
    """Keras 2's ``Functional.get_config()`` of ``model`` (see the module docstring).

    Args:
        model: a Functional model.
        layer_config: layer -> its ``{"class_name", "config"}`` entry.
    """
    from simdist.keras.engine.input_layer import InputLayer

    writer = _Writer(model)
    by_layer: dict[int, list] = {}
    for node in model._nodes:
        if not isinstance(node.layer, InputLayer):
            by_layer.setdefault(id(node.layer), []).append(node)
    layers = []
    for layer in model.layers:
        entry = layer_config(layer)
        entry["name"] = layer.name
        nodes = sorted(by_layer.get(id(layer), []), key=lambda n: writer.node_index[id(n)])
        entry["inbound_nodes"] = [writer.node(n) for n in nodes]
        layers.append(entry)
    return {
        "name": model.name,
        "trainable": model.trainable,
        "layers": layers,
        "input_layers": writer.endpoints(model._nested_inputs),
        "output_layers": writer.endpoints(model._nested_outputs),
    }


# --- reading ---------------------------------------------------------------------------------
class _NotYet(Exception):
    """A node needs a tensor that no processed node has made yet."""


def _is_reference(item) -> bool:
    return isinstance(item, list) and len(item) in (3, 4) and isinstance(item[0], str)


class _Reader:
    def __init__(self) -> None:
        self.produced: dict[tuple[str, int], object] = {}  # (layer, config node) -> outputs

    def tensor(self, layer_name: str, node: int, index: int):
        outputs = self.produced.get((layer_name, node))
        if outputs is None:
            raise _NotYet
        return nest.flatten(outputs)[index]

    def value(self, item):
        """A kwargs value: references become tensors; an encoded Ellipsis becomes ``...``."""
        if _is_reference(item) and len(item) == 3:
            return self.tensor(*item)
        if isinstance(item, dict) and item == _ELLIPSIS:
            return Ellipsis
        if isinstance(item, dict):
            return {k: self.value(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):  # a tuple: a config not read back from JSON
            return [self.value(v) for v in item]
        return item

    def node(self, layer, data):
        """Call ``layer`` on what the node ``data`` names; raises _NotYet if not ready."""
        kwargs: dict = {}

        def rebuild(item):
            nonlocal kwargs
            if _is_reference(item):
                if len(item) == 4:
                    kwargs = self.value(item[3])
                if item[0] == CONSTANT_VALUE:
                    return self.value(item[2])
                return self.tensor(item[0], item[1], item[2])
            if isinstance(item, dict):
                return {k: rebuild(v) for k, v in item.items()}
            if isinstance(item, (list, tuple)):
                return [rebuild(v) for v in item]
            raise ValueError(f"Improperly formatted model config: node data {item!r:.200}.")

        inputs = rebuild(data)
        if not _preserves_structure(layer) and not isinstance(inputs, dict):
            flat = nest.flatten(inputs)
            if len(flat) == 1:
                inputs = flat[0]
        return layer(inputs, **kwargs)


def functional_from_config(config: dict, layer_from_config, where: str):
    """Rebuild a Functional model from Keras 2's schema (see the module docstring).

    Args:
        config: the model's config.
        layer_from_config: a layer entry -> a new layer.
        where: what the config came from, for error messages.

    Raises:
        DataLossError: a malformed config (a missing field, a node that never gets its inputs).
    """
    from simdist.keras.engine.functional import Functional
    from simdist.keras.engine.input_layer import InputLayer

    reader = _Reader()
    try:
        layers, pending, calls = {}, {}, {}
        for entry in config["layers"]:
            layer = layer_from_config(entry)
            name = entry["name"]
            layers[name] = layer
            calls[name] = 1 if _skips_first_node(layer) else 0
            if isinstance(layer, InputLayer):
                reader.produced[(name, 0)] = layer._symbolic_output()
            else:
                pending[name] = list(entry.get("inbound_nodes", []))
        while any(pending.values()):
            progress = False
            for name, queue in pending.items():
                while queue:
                    try:
                        outputs = reader.node(layers[name], queue[0])
                    except _NotYet:
                        break
                    reader.produced[(name, calls[name])] = outputs
                    calls[name] += 1
                    queue.pop(0)
                    progress = True
            if not progress:
                stuck = sorted(name for name, queue in pending.items() if queue)
                raise errors.DataLossError(
                    f"{where}: the Functional model config is malformed: the nodes of layers "
                    f"{stuck} need tensors that no layer makes."
                )

        def endpoints(structure):
            if _is_reference(structure):
                return reader.tensor(*structure[:3])
            if isinstance(structure, dict):
                return {k: endpoints(v) for k, v in structure.items()}
            return [endpoints(v) for v in structure]

        inputs = endpoints(config["input_layers"])
        outputs = endpoints(config["output_layers"])
    except (KeyError, TypeError, IndexError, _NotYet) as exc:
        raise errors.DataLossError(
            f"{where}: the Functional model description is malformed ({exc!r})."
        ) from None
    if isinstance(inputs, list) and len(inputs) == 1:
        inputs = inputs[0]
    if isinstance(outputs, list) and len(outputs) == 1:
        outputs = outputs[0]
    model = Functional(inputs, outputs, name=config.get("name"))
    if not config.get("trainable", True):
        model.trainable = False
    return model
