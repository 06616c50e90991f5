"""The object graph a checkpoint saves: which objects and variables hang under a root, by name.

A checkpoint does not save "the variables"; it saves a graph of named dependencies, as TF's
object-based checkpoints do. Each object has named children; a variable is a leaf; the key
of a value is the path of names from the root to the first place the variable is found,
walking breadth first with children in a fixed order (so keys do not depend on object ids,
and a variable reachable twice is saved once). What the children of an object are:

* an object with a ``_checkpoint_children()`` method: whatever it returns, a mapping
  ``name -> child`` (a variable, another trackable object, or a list/tuple/dict of them).
  This is the protocol for classes simdist's checkpoint does not know by name; ``Checkpoint``
  itself uses it.
* a Keras optimizer: ``iter`` (``iterations``) and ``learning_rate`` (when it is a variable,
  not a schedule). Its slot variables are not children: each is saved under the variable it
  belongs to, as ``<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot name>``.
* a ``Sequential`` model: ``layer_with_weights-<j>`` (the j-th layer that has weights now)
  and ``layer-<i>`` (the i-th layer) for each layer, as Keras names them, then its own
  weights and other tracked attributes. ``layer-<i>`` exists before the model is built, which
  is how a checkpoint finds the layers of a model that will build later.
* any other Keras layer or model: its own weights (``add_weight``) by their short name
  (``kernel``), then its tracked attributes (sub-layers, variables, lists and dicts of them)
  by attribute name, in assignment order.
* a list or tuple: its trackable items, named ``0``, ``1``...; a dict: by key, sorted.

A variable is saved under ``<path>/.ATTRIBUTES/VARIABLE_VALUE`` (TF's key). Names are escaped
so that user names never collide with those reserved parts: ``.`` becomes ``..`` and ``/``
becomes ``.S``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simdist.keras.engine.sequential import Sequential
from simdist.keras.engine.tracking import AutoTrackable, is_variable
from simdist.keras.optimizers.optimizer import Optimizer

__all__ = [
    "ObjectGraph",
    "walk",
    "children_of",
    "is_trackable",
    "value_key",
    "escape",
    "slot_name_path",
]

VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


def escape(name: str) -> str:
    """A child name made safe to join with ``/`` (``.`` -> ``..``, ``/`` -> ``.S``)."""
    return str(name).replace(".", "..").replace("/", ".S")


def value_key(path: str) -> str:
    """The key under which the variable at ``path`` is saved."""
    return path + VALUE_SUFFIX


def slot_name_path(variable_path: str, optimizer_path: str, slot_name: str) -> str:
    """The path of ``optimizer``'s slot ``slot_name`` for the variable at ``variable_path``."""
    return f"{variable_path}/.OPTIMIZER_SLOT/{optimizer_path}/{escape(slot_name)}"


def is_trackable(value) -> bool:
    """Whether a checkpoint can hold ``value`` (a variable, layer, optimizer, container...)."""
    return (
        is_variable(value)
        or isinstance(value, (AutoTrackable, Optimizer, list, tuple, dict))
        or callable(getattr(value, "_checkpoint_children", None))
    )


def _short_name(variable) -> str:
    name = str(variable.name)
    if name.endswith(":0"):
        name = name[:-2]
    return name.rsplit("/", 1)[-1]


def _container_children(value) -> dict:
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:
            keys = list(value)
        items = [(str(k), value[k]) for k in keys]
    else:
        items = [(str(i), v) for i, v in enumerate(value)]
    return {name: v for name, v in items if is_trackable(v)}


def _layer_children(layer: AutoTrackable, skip: tuple[str, ...] = ()) -> dict:
    """Own weights by short name, then tracked attributes (attribute names win on clashes)."""
    tracked = {n: v for n, v in layer._tracked.items() if n not in skip and is_trackable(v)}
    tracked_ids = {id(v) for v in tracked.values()}
    out: dict = {}
    for weight in layer._trainable_weights + layer._non_trainable_weights:
        if id(weight) in tracked_ids or any(w is weight for w in out.values()):
            continue
        name = base = _short_name(weight)
        n = 0
        while name in out or name in tracked:
            n += 1
            name = f"{base}_{n}"
        out[name] = weight
    out.update(tracked)
    return out


def _sequential_children(model: Sequential) -> dict:
    out: dict = {}
    layers = model.layers
    with_weights = [layer for layer in layers if layer.weights]
    for j, layer in enumerate(with_weights):
        out[f"layer_with_weights-{j}"] = layer
    for i, layer in enumerate(layers):
        out[f"layer-{i}"] = layer
    out.update(_layer_children(model, skip=("_stack", "_input_layer")))
    return out


def _optimizer_children(optimizer: Optimizer) -> dict:
    out = {"iter": optimizer.iterations}
    if is_variable(optimizer.learning_rate):
        out["learning_rate"] = optimizer.learning_rate
    return out


def children_of(obj) -> dict:
    """The named children of ``obj`` (unescaped names, in their fixed order).

    Variables have no children; objects checkpoint does not know have none.
    """
    hook = getattr(obj, "_checkpoint_children", None)
    if callable(hook) and not is_variable(obj):
        return {str(k): v for k, v in dict(hook()).items() if is_trackable(v)}
    if is_variable(obj):
        return {}
    if isinstance(obj, Optimizer):
        return _optimizer_children(obj)
    if isinstance(obj, Sequential):
        return _sequential_children(obj)
    if isinstance(obj, AutoTrackable):
        return _layer_children(obj)
    if isinstance(obj, (list, tuple, dict)):
        return _container_children(obj)
    return {}


def optimizer_slots(optimizer: Optimizer) -> list[tuple[object, str, object]]:
    """``(variable, slot name, slot variable)`` for every slot ``optimizer`` has created."""
    out = []
    for ref, slots in optimizer._slots.items():
        variable = ref.deref()
        for slot_name, slot in slots.items():
            out.append((variable, slot_name, slot))
    return out


@dataclass
class ObjectGraph:
    """The graph under a root, as found by one breadth-first walk.

    ``objects[i]`` is node ``i`` (node 0 is the root), ``paths[i]`` its path, ``children[i]``
    maps escaped child names to node ids, ``slots[i]`` lists an optimizer node's
    ``(variable node, slot name, slot node)``.
    """

    objects: list = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    children: list[dict[str, int]] = field(default_factory=list)
    slots: dict[int, list[tuple[int, str, int]]] = field(default_factory=dict)
    node_of: dict[int, int] = field(default_factory=dict)  # id(object) -> node

    def add(self, obj, path: str) -> int:
        node = len(self.objects)
        self.objects.append(obj)
        self.paths.append(path)
        self.children.append({})
        self.node_of[id(obj)] = node
        return node

    def variable_nodes(self) -> list[int]:
        return [i for i, obj in enumerate(self.objects) if is_variable(obj)]


def walk(root) -> ObjectGraph:
    """Every object and variable reachable from ``root``, breadth first, each once."""
    graph = ObjectGraph()
    graph.add(root, "")
    queue = [0]
    while queue:
        next_queue = []
        for node in queue:
            prefix = graph.paths[node]
            for name, child in children_of(graph.objects[node]).items():
                escaped = escape(name)
                child_node = graph.node_of.get(id(child))
                if child_node is None:
                    path = f"{prefix}/{escaped}" if prefix else escaped
                    child_node = graph.add(child, path)
                    next_queue.append(child_node)
                graph.children[node][escaped] = child_node
        queue = next_queue
    for node, obj in enumerate(list(graph.objects)):
        if isinstance(obj, Optimizer):
            graph.slots[node] = _slot_nodes(graph, node, obj)
    return graph


def _slot_nodes(graph: ObjectGraph, opt_node: int, optimizer: Optimizer) -> list:
    out = []
    for variable, slot_name, slot in optimizer_slots(optimizer):
        var_node = graph.node_of.get(id(variable))
        if var_node is None:
            continue  # the slot's variable is not saved: neither is the slot (as TF)
        slot_node = graph.node_of.get(id(slot))
        if slot_node is None:
            path = slot_name_path(graph.paths[var_node], graph.paths[opt_node], slot_name)
            slot_node = graph.add(slot, path)
        out.append((var_node, slot_name, slot_node))
    return out
