"""simdist.testing: hypothesis strategies, the conformance catalogue, adapters, runner, plugin.

The catalogue and the strategies need hypothesis (``pip install 'simdist[test]'``); this
package imports it only when one of them is first used, so the ``simdist`` command and the
pytest plugin load without it. ``simdist.testing.runner`` runs the catalogue
(``simdist conformance``); see ``simdist.testing.adapters.base.Adapter`` for testing
another implementation.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "strategies": ("simdist.testing.strategies", None),
    "fresh_runtime": ("simdist.testing.runtime", "fresh_runtime"),
    "Adapter": ("simdist.testing.adapters.base", "Adapter"),
    "ClusterAdapter": ("simdist.testing.adapters.cluster_adapter", "ClusterAdapter"),
    "Unsupported": ("simdist.testing.adapters.base", "Unsupported"),
    "available": ("simdist.testing.adapters", "available"),
    "load_adapter": ("simdist.testing.adapters", "load_adapter"),
    "KNOWN_DIFFERENCES": ("simdist.testing.known_differences", "KNOWN_DIFFERENCES"),
    "KnownDifference": ("simdist.testing.known_differences", "KnownDifference"),
    "CATALOGUE": ("simdist.testing.properties", "CATALOGUE"),
    "Property": ("simdist.testing.properties", "Property"),
    "Violation": ("simdist.testing.properties", "Violation"),
    "select": ("simdist.testing.properties", "select"),
    "Outcome": ("simdist.testing.runner", "Outcome"),
    "run": ("simdist.testing.runner", "run"),
    "run_property": ("simdist.testing.runner", "run_property"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'simdist.testing' has no attribute {name!r}")
    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name)
    return module if attr is None else getattr(module, attr)
