"""Keras 2's serialized form of a Keras object, shared by optimizers, losses, metrics,
regularizers and constraints.

``object_config(obj, module)`` is the ``{'module', 'class_name', 'config',
'registered_name'}`` dict Keras 2 writes; ``find_class`` looks a serialized name up in the
user's ``custom_objects``, then among the built-in classes, then among the short names
(``'l2'``, ``'non_neg'``), and names what exists when nothing matches.
"""

from __future__ import annotations

from simdist.keras.object_registration import get_registered_name, with_custom_objects

__all__ = ["object_config", "find_class"]


def object_config(obj, module: str) -> dict:
    """``obj`` as Keras 2's serialized dict (``module`` e.g. ``'keras.regularizers'``)."""
    return {
        "module": module,
        "class_name": type(obj).__name__,
        "config": obj.get_config(),
        # a registered class's "package>Name", as Keras 2 writes it; None for the others
        "registered_name": _registered_name(type(obj)),
    }


def _registered_name(cls):
    name = get_registered_name(cls)
    return name if name != cls.__name__ else None


def find_class(config, custom_objects, classes: dict, names: dict, kind: str) -> type:
    """The class a name or a serialized dict refers to.

    Raises:
        ValueError: no class of that name (the message lists the known ones).
    """
    custom = with_custom_objects(custom_objects)
    name = config if isinstance(config, str) else str(config.get("class_name", ""))
    cls = custom.get(name) or classes.get(name) or names.get(name)
    if cls is None:
        raise ValueError(
            f"Unknown {kind}: {name!r}. Use one of {sorted(names)}, {sorted(classes)}, "
            "or pass the class in `custom_objects`."
        )
    return cls
