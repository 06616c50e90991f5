"""The object graph a checkpoint saves: which objects and values hang under a root, by name.

A checkpoint does not save "the variables"; it saves a graph of named dependencies, as TF's
object-based checkpoints do. Objects describe themselves through the trackable protocol
(``simdist.core.trackable``): ``_trackable_children()`` names an object's children, and
``_serialize_to_tensors()`` gives what it saves of itself. This module knows no class of
Keras, tf.data or the strategies; what the children of the classes that simdist ships are
is documented where each implements the protocol:

* a Keras layer or model: its own weights by short name (``kernel``), then its tracked
  attributes by attribute name (``keras/engine/tracking.py``); a ``Sequential``:
  ``layer_with_weights-<j>`` and ``layer-<i>`` first (``keras/engine/sequential.py``);
* a Keras optimizer: ``iter`` and ``learning_rate``; its slot variables are saved under the
  variable they belong to, as ``<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>``;
* a ``Checkpoint``: its keyword arguments and attributes, then ``save_counter``;
* a list or tuple: its trackable items, ``0``, ``1``...; a dict: by key, sorted.

The key of a value is the path of names from the root to the first place its object is
found, walking breadth first with children in their fixed order (so keys do not depend on
object ids, and an object reachable twice is saved once), then ``/.ATTRIBUTES/<name>``:
``VARIABLE_VALUE`` for a variable (TF's key), ``ITERATOR_STATE`` for a dataset iterator.
Names are escaped so that user names never collide with those reserved parts: ``.`` becomes
``..`` and ``/`` becomes ``.S``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simdist.core.trackable import children_of, is_trackable, slots_of

__all__ = [
    "ObjectGraph",
    "walk",
    "children_of",
    "is_trackable",
    "value_key",
    "escape",
    "slot_name_path",
]

ATTRIBUTES = "/.ATTRIBUTES/"


def escape(name: str) -> str:
    """A child name made safe to join with ``/`` (``.`` -> ``..``, ``/`` -> ``.S``)."""
    return str(name).replace(".", "..").replace("/", ".S")


def value_key(path: str, tensor_name: str = "VARIABLE_VALUE") -> str:
    """The key under which the object at ``path`` saves its tensor ``tensor_name``."""
    return path + ATTRIBUTES + tensor_name


def slot_name_path(variable_path: str, optimizer_path: str, slot_name: str) -> str:
    """The path of ``optimizer``'s slot ``slot_name`` for the variable at ``variable_path``."""
    return f"{variable_path}/.OPTIMIZER_SLOT/{optimizer_path}/{escape(slot_name)}"


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


def walk(root) -> ObjectGraph:
    """Every object reachable from ``root``, breadth first, each once, then the slots."""
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
        slots = slots_of(obj)
        if slots:
            graph.slots[node] = _slot_nodes(graph, node, slots)
    return graph


def _slot_nodes(graph: ObjectGraph, opt_node: int, slots: list) -> list:
    out = []
    for variable, slot_name, slot in slots:
        var_node = graph.node_of.get(id(variable))
        if var_node is None:
            continue  # the slot's variable is not saved: neither is the slot (as TF)
        slot_node = graph.node_of.get(id(slot))
        if slot_node is None:
            path = slot_name_path(graph.paths[var_node], graph.paths[opt_node], slot_name)
            slot_node = graph.add(slot, path)
        out.append((var_node, slot_name, slot_node))
    return out
