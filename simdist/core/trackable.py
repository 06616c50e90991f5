"""The trackable protocol: how an object tells a checkpoint its children and its saved state.

``simdist.checkpoint`` knows no Keras layer, optimizer, dataset iterator or strategy: it walks
objects through this protocol (TF's ``Trackable``), which those classes implement where they
live, below or above the checkpoint package:

``_trackable_children() -> {name: child}``
    The object's named dependencies, in a fixed order (a child is a variable, another
    trackable, or a plain list/tuple/dict of them). Layers, models, optimizers, ``Checkpoint``
    and the tracked containers implement it.
``_serialize_to_tensors() -> {tensor name: np.ndarray}``
    The object's own state, saved under ``<path>/.ATTRIBUTES/<tensor name>``: a variable
    gives ``{"VARIABLE_VALUE": value}``, a dataset iterator ``{"ITERATOR_STATE": bytes}``.
``_validate_restore(tensors)`` / ``_restore_from_tensors(tensors)``
    Restoring is two passes: every object first checks what it is given (raising
    ``ValueError`` for a wrong shape or dtype), then all are written. So a mismatch leaves
    every object of that restore untouched.
``_trackable_slots() -> [(variable, slot name, slot variable)]``
    An optimizer's slot variables: saved under the variable they belong to, not as children.

Deferred restoration needs to know when children appear (a layer builds its weights, an
attribute is assigned, a variable is appended to a tracked list, an optimizer creates a
slot). Implementers call :func:`children_changed` then; a pending restoration registers
itself with :func:`add_listener` and is called back. Without listeners the call costs one
dictionary test.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable

import numpy as np

__all__ = [
    "Trackable",
    "is_trackable",
    "children_of",
    "tensors_of",
    "slots_of",
    "children_changed",
    "add_listener",
    "VARIABLE_VALUE",
]

VARIABLE_VALUE = "VARIABLE_VALUE"


class Trackable:
    """Base class of objects a checkpoint can hold; every method has a do-nothing default."""

    def _trackable_children(self) -> dict:
        return {}

    def _serialize_to_tensors(self) -> dict[str, np.ndarray]:
        return {}

    def _validate_restore(self, tensors: dict[str, np.ndarray]) -> None:
        """Raise ``ValueError`` when ``tensors`` cannot be restored into this object."""

    def _restore_from_tensors(self, tensors: dict[str, np.ndarray]) -> None:
        """Take the saved state (called only after ``_validate_restore`` passed)."""

    def _trackable_slots(self) -> list:
        return []


def is_trackable(value) -> bool:
    """Whether a checkpoint can hold ``value``: a trackable, or a list/tuple/dict."""
    if isinstance(value, (Trackable, list, tuple, dict)):
        return True
    return callable(getattr(value, "_trackable_children", None)) or callable(
        getattr(value, "_serialize_to_tensors", None)
    )


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


def children_of(obj) -> dict:
    """The named children of ``obj``, only those a checkpoint can hold, in their order."""
    hook = getattr(obj, "_trackable_children", None)
    if callable(hook):
        return {str(k): v for k, v in dict(hook()).items() if is_trackable(v)}
    if isinstance(obj, (list, tuple, dict)):
        return _container_children(obj)
    return {}


def tensors_of(obj) -> dict[str, np.ndarray]:
    """What ``obj`` saves of itself (``{}`` for a pure container)."""
    hook = getattr(obj, "_serialize_to_tensors", None)
    return dict(hook()) if callable(hook) else {}


def slots_of(obj) -> list:
    """``(variable, slot name, slot)`` for every slot ``obj`` holds (optimizers)."""
    hook = getattr(obj, "_trackable_slots", None)
    return list(hook()) if callable(hook) else []


# --- deferred restoration: who wants to hear about new children --------------------------
_lock = threading.Lock()
_listeners: dict[int, tuple[weakref.ref, list[Callable[[object], bool]]]] = {}


def add_listener(obj, callback: Callable[[object], bool]) -> None:
    """Call ``callback(obj)`` whenever ``obj``'s children change, until it returns True."""
    key = id(obj)
    with _lock:
        entry = _listeners.get(key)
        if entry is None or entry[0]() is not obj:
            ref = weakref.ref(obj, functools.partial(_forget, key))
            entry = (ref, [])
            _listeners[key] = entry
        entry[1].append(callback)


def _forget(key: int, ref: weakref.ref, _lock=_lock, _listeners=_listeners) -> None:
    with _lock:  # (module globals are bound as defaults: this may run at interpreter exit)
        entry = _listeners.get(key)
        if entry is not None and entry[0] is ref:
            del _listeners[key]


def children_changed(obj) -> None:
    """Tell pending restorations that ``obj`` has new children (cheap when none wait)."""
    if not _listeners:
        return
    with _lock:
        entry = _listeners.get(id(obj))
        if entry is None or entry[0]() is not obj:
            return
        callbacks = list(entry[1])
    done = [cb for cb in callbacks if cb(obj)]
    if done:
        with _lock:
            entry = _listeners.get(id(obj))
            if entry is not None:
                entry[1][:] = [cb for cb in entry[1] if not any(cb is d for d in done)]
                if not entry[1]:
                    del _listeners[id(obj)]
