"""Custom objects that deserialization finds by name: the registry and the scopes.

Keras 2's rule: ``register_keras_serializable(package, name)`` puts a class in a global
registry under ``"package>Name"``; ``custom_object_scope({...})`` adds names for the code
inside the ``with`` block (per thread); ``get_custom_objects()`` is the global dict itself.
Every simdist deserializer (layers in ``from_config`` / ``load_model``, optimizers, losses,
metrics, regularizers, constraints) looks names up in :func:`with_custom_objects`: the
``custom_objects`` it was given, then the scope, then the registry. simdist writes a class's
plain name in configs, so a registered class is also found under its plain ``Name``.
"""

from __future__ import annotations

import inspect
import threading

__all__ = [
    "CustomObjectScope",
    "custom_object_scope",
    "get_custom_objects",
    "register_keras_serializable",
    "get_registered_name",
    "get_registered_object",
    "with_custom_objects",
]

_GLOBAL_CUSTOM_OBJECTS: dict = {}
_GLOBAL_CUSTOM_NAMES: dict = {}
_SCOPE = threading.local()  # .objects: the names of the enclosing custom_object_scope blocks


def _scoped() -> dict:
    return getattr(_SCOPE, "objects", {})


class CustomObjectScope:
    """``with custom_object_scope({"MyLayer": MyLayer}): ...``: names for deserialization.

    Args:
        *args: dicts of ``{name: object}``.
    """

    def __init__(self, *args) -> None:
        self.custom_objects = args
        self.backup = None

    def __enter__(self):
        self.backup = dict(_scoped())
        merged = dict(self.backup)
        for objects in self.custom_objects:
            merged.update(objects)
        _SCOPE.objects = merged
        return self

    def __exit__(self, *exc) -> None:
        _SCOPE.objects = self.backup


custom_object_scope = CustomObjectScope


def get_custom_objects() -> dict:
    """The global dict of custom objects (editing it registers or removes names)."""
    return _GLOBAL_CUSTOM_OBJECTS


def register_keras_serializable(package: str = "Custom", name: str | None = None):
    """A decorator registering a class (or function) under ``"package>name"``.

    Raises:
        ValueError: a class without ``get_config``.
    """

    def decorator(arg):
        class_name = name if name is not None else arg.__name__
        registered_name = package + ">" + class_name
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _GLOBAL_CUSTOM_OBJECTS[registered_name] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = registered_name
        return arg

    return decorator


def get_registered_name(obj) -> str:
    """``"package>Name"`` of a registered object, else its ``__name__``."""
    return _GLOBAL_CUSTOM_NAMES.get(obj, obj.__name__)


def get_registered_object(name: str, custom_objects=None, module_objects=None):
    """The object registered (or scoped, or given) under ``name``; None if none is."""
    scoped = _scoped()
    if name in scoped:
        return scoped[name]
    if name in _GLOBAL_CUSTOM_OBJECTS:
        return _GLOBAL_CUSTOM_OBJECTS[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def with_custom_objects(custom_objects=None) -> dict:
    """The names a deserializer may resolve: registered (also by plain name), then scoped,
    then ``custom_objects`` (the later wins)."""
    out: dict = {}
    for key, value in _GLOBAL_CUSTOM_OBJECTS.items():
        out.setdefault(key.rpartition(">")[2], value)
    out.update(_GLOBAL_CUSTOM_OBJECTS)
    out.update(_scoped())
    out.update(custom_objects or {})
    return out
