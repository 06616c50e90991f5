"""Adapters: the Adapter interface, the built-in adapters, and loading one by name.

Built-in names: ``simdist``, ``reference``, ``tensorflow`` and the deliberately broken
``broken.<name>`` adapters. Third parties register theirs under the entry-point group
``simdist.adapters`` (name -> a factory ``f(max_replicas) -> Adapter``, usually the class)::

    [project.entry-points."simdist.adapters"]
    myimpl = "myimpl.conformance:MyAdapter"

A ``"package.module:Factory"`` string also works without registration.
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

from simdist.testing.adapters.base import OPERATIONS as OPERATIONS
from simdist.testing.adapters.base import Adapter as Adapter

ENTRY_POINT_GROUP = "simdist.adapters"

BUILTIN: dict[str, str] = {
    "simdist": "simdist.testing.adapters.simdist_adapter:SimdistAdapter",
    "reference": "simdist.testing.adapters.reference_adapter:ReferenceAdapter",
    "tensorflow": "simdist.testing.adapters.tensorflow_adapter:TensorFlowAdapter",
}


def _broken_names() -> dict[str, str]:
    from simdist.testing.adapters import broken

    return {
        f"broken.{name}": f"simdist.testing.adapters.broken:{cls.__name__}"
        for name, cls in broken.BROKEN.items()
    }


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    """Every adapter name ``load_adapter`` knows: built-in, broken, then entry points."""
    names = [*BUILTIN, *_broken_names()]
    return names + sorted(n for n in _entry_points() if n not in names)


def _import(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    obj = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_adapter(name: str, max_replicas: int = 4) -> Adapter:
    """Creates the adapter called ``name`` for up to ``max_replicas`` replicas.

    Args:
      name: a built-in name, an entry point of group ``simdist.adapters``, or
        ``"package.module:Factory"``.
      max_replicas: passed to the factory.

    Returns:
      The adapter.

    Raises:
      ValueError: an unknown name (the message lists the known ones).
      TypeError: the factory did not return an Adapter.
      ImportError: the implementation is not installed (e.g. TensorFlow).
    """
    table = {**BUILTIN, **_broken_names()}
    if name in table:
        factory = _import(table[name])
    elif name in (points := _entry_points()):
        factory = points[name].load()
    elif ":" in name:
        factory = _import(name)
    else:
        raise ValueError(
            f"unknown implementation {name!r}; use one of {', '.join(available())}, or "
            "'package.module:Factory'"
        )
    adapter = factory(max_replicas)
    if not isinstance(adapter, Adapter):
        raise TypeError(
            f"{name!r} made a {type(adapter).__name__}, not a simdist.testing.adapters.Adapter"
        )
    return adapter
