"""Attribute tracking for Keras layers: which sub-layers and variables an object holds.

Assigning a layer, a variable, or a list/tuple/dict holding them to an attribute records it,
in assignment order; reassigning moves the attribute to the end (Keras deletes, then adds).
Containers are walked when asked, so layers appended to a tracked list later are found too.
Inside containers, lists and tuples keep their order and dicts are visited in sorted-key
order (as ``tf.nest`` does). Variables assigned directly become the object's own weights.
"""

from __future__ import annotations

import itertools

from simdist.core import trackable
from simdist.core.tensor import Tensor
from simdist.core.variables import Variable

__all__ = [
    "AutoTrackable",
    "is_variable",
    "dedup",
    "leaves",
    "tracking_epoch",
    "note_tracking_change",
    "containers_unchanged",
    "snapshot_containers",
]

# Bumped whenever an object tracks or untracks a value, a layer adds a weight or its
# ``trainable`` flag is set: the weight lists cached on layers (base_layer) are only valid
# for the epoch they were gathered in. ``next()`` on a count is atomic under the GIL.
_EPOCHS = itertools.count(1)
_epoch = next(_EPOCHS)


def tracking_epoch() -> int:
    """The current tracking epoch (changes after every :func:`note_tracking_change`)."""
    return _epoch


def note_tracking_change() -> None:
    """Invalidate every cached weight list: something tracked has changed."""
    global _epoch
    _epoch = next(_EPOCHS)


def snapshot_containers(containers: list) -> tuple:
    """What each mutable container (list or dict) held, to see later whether it changed:
    a tracked list that gains a layer by ``append`` tells nobody. The items are kept with
    their ids, so no id can be reused by a new object while the snapshot lives."""
    out = []
    for c in containers:
        items = tuple(c.values()) if isinstance(c, dict) else tuple(c)
        keys = tuple(c.keys()) if isinstance(c, dict) else None
        out.append((c, keys, items, tuple(map(id, items))))
    return tuple(out)


def containers_unchanged(snapshot: tuple) -> bool:
    """Whether every container of a :func:`snapshot_containers` still holds the same items
    (the same objects, by identity; dicts also the same keys in the same order)."""
    for container, keys, _items, ids in snapshot:
        if keys is None:
            if tuple(map(id, container)) != ids:
                return False
        elif tuple(container.keys()) != keys or tuple(map(id, container.values())) != ids:
            return False
    return True


def is_variable(value) -> bool:
    """A ``tf.Variable`` or a variable-like object (a strategy's distributed variable)."""
    if isinstance(value, Variable):
        return True
    return (
        not isinstance(value, (AutoTrackable, Tensor))
        and callable(getattr(value, "assign", None))
        and hasattr(value, "trainable")
        and hasattr(value, "_to_tensor")
    )


def dedup(items: list) -> list:
    """``items`` without repeats (by identity), first occurrence kept."""
    seen: set[int] = set()
    out = []
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            out.append(item)
    return out


# Values that are never trackable and hold nothing: leaves() skips them with one lookup
# (layers keep tuples of ints such as kernel_size among their tracked attributes).
_PLAIN_TYPES = frozenset({int, float, bool, str, bytes, type(None)})


def leaves(value, containers: list | None = None) -> list:
    """Trackables and variables inside ``value`` (lists/tuples in order, dicts by key).

    ``containers``, when given, receives every list and dict walked (what a cached weight
    list must watch, see :func:`snapshot_containers`)."""
    out = []
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) in _PLAIN_TYPES:
            continue
        if isinstance(item, dict):
            if containers is not None:
                containers.append(item)
            try:
                keys = sorted(item)
            except TypeError:
                keys = list(item)
            stack.extend(item[k] for k in reversed(keys))
        elif isinstance(item, (list, tuple)):
            if containers is not None and not isinstance(item, tuple):
                containers.append(item)
            stack.extend(reversed(item))
        elif isinstance(item, AutoTrackable) or is_variable(item):
            out.append(item)
    return out


class AutoTrackable(trackable.Trackable):
    """Records sub-layers and variables as they are assigned to attributes.

    Its checkpoint children (``simdist.core.trackable``): its own weights by short name
    (``kernel``), then its tracked attributes by attribute name, in assignment order
    (attribute names win on clashes).
    """

    _TRACKS = True  # Metric turns this off: its variables are not a model's weights

    def _init_tracking(self) -> None:
        init = object.__setattr__
        init(self, "_tracked", {})  # attribute name -> tracked value, in assignment order
        init(self, "_trainable_weights", [])
        init(self, "_non_trainable_weights", [])

    def __setattr__(self, name: str, value) -> None:
        if "_tracked" not in self.__dict__:
            raise RuntimeError(
                f"It looks like you are subclassing `{type(self).__name__}` and forgot to call "
                "`super().__init__()`. Call it first thing in `__init__`."
            )
        if name in self._tracked:
            self._untrack(name)
        if isinstance(value, (AutoTrackable, list, tuple, dict)) or is_variable(value):
            self._tracked[name] = value
            for leaf in leaves(value):
                if is_variable(leaf):
                    own = self._trainable_weights if leaf.trainable else self._non_trainable_weights
                    if not any(w is leaf for w in own):
                        own.append(leaf)
            object.__setattr__(self, name, value)
            note_tracking_change()
            trackable.children_changed(self)  # a pending restore may be waiting for it
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._untrack(name)
        object.__delattr__(self, name)

    def _untrack(self, name: str) -> None:
        old = self._tracked.pop(name, None)
        if old is None:
            return
        note_tracking_change()
        for leaf in leaves(old):
            if is_variable(leaf):
                for own in (self._trainable_weights, self._non_trainable_weights):
                    own[:] = [w for w in own if w is not leaf]

    def _direct_sublayers(self, containers: list | None = None) -> list:
        layers = [leaf for v in self._tracked.values() for leaf in leaves(v, containers)]
        return dedup([x for x in layers if isinstance(x, AutoTrackable) and x._TRACKS])

    def _flatten_layers(self, include_self: bool = True, recursive: bool = True) -> list:
        """Self (optionally) and sub-layers, depth first, each once."""
        out = [self] if include_self else []
        stack = list(reversed(self._direct_sublayers()))
        while stack:
            layer = stack.pop()
            if layer is self or any(x is layer for x in out):
                continue
            out.append(layer)
            if recursive:
                stack.extend(reversed(layer._direct_sublayers()))
        return out

    # --- the trackable protocol (simdist.core.trackable) ---------------------------------
    def _trackable_children(self, skip: tuple[str, ...] = ()) -> dict:
        tracked = {
            n: v for n, v in self._tracked.items() if n not in skip and trackable.is_trackable(v)
        }
        tracked_ids = {id(v) for v in tracked.values()}
        out: dict = {}
        for weight in self._trainable_weights + self._non_trainable_weights:
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


def _short_name(variable) -> str:
    name = str(variable.name)
    if name.endswith(":0"):
        name = name[:-2]
    return name.rsplit("/", 1)[-1]
