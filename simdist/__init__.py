"""simdist: tf.distribute semantics on simulated devices, in NumPy. ``import simdist as tf``.

This module is the TF-shaped face: it only re-exports. The implementation lives in
``simdist.core`` (tensors, ops, autodiff), ``simdist.keras``, ``simdist.data``,
``simdist.distribute`` and ``simdist.checkpoint``; simdist's own additions (topologies,
collectives, costs, profiles) gather under ``simdist.sim``.

The core's ops and types are imported at once; the subpackages (``tf.keras``,
``tf.distribute``, ``tf.data``...) on first use (PEP 562), as TensorFlow loads its own
lazily: an MPI rank, a CLI call or a test's subprocess that never touches Keras does not
pay for importing it.
"""

import importlib as _importlib

from simdist import errors as errors

# the ops above, on Keras symbolic tensors, make Keras op layers (TFOpLambda)
from simdist import symbolic_dispatch as _symbolic_dispatch
from simdist.core import *  # noqa: F403 - core's __all__ is the top-level op and type face
from simdist.core import dtypes as dtypes
from simdist.core import nest as nest
from simdist.core.ops.nn_ops import sigmoid as sigmoid
from simdist.core.ops.nn_ops import tanh as tanh
from simdist.core.sparse import SparseTensor as SparseTensor
from simdist.core.sparse import SparseTensorSpec as SparseTensorSpec
from simdist.version import __version__ as __version__

_symbolic_dispatch.install(globals(), "")

# name -> the module it is (imported on first access; then an ordinary attribute)
_LAZY = {
    "autograph": "simdist.autograph",
    "compat": "simdist.compat",
    "config": "simdist.config",
    "data": "simdist.data",
    "debugging": "simdist.debugging",
    "distribute": "simdist.distribute",
    "image": "simdist.image",
    "io": "simdist.io",
    "keras": "simdist.keras",
    "linalg": "simdist.linalg",
    "math": "simdist.math",
    "nn": "simdist.nn",
    "ragged": "simdist.ragged",
    "random": "simdist.random",
    "saved_model": "simdist.saved_model",
    "sim": "simdist.sim",
    "sparse": "simdist.sparse",
    "strings": "simdist.strings",
    "summary": "simdist.summary",
    "tpu": "simdist.tpu",
    "train": "simdist.train",
    "losses": "simdist.keras.losses",
    "metrics": "simdist.keras.metrics",
    "optimizers": "simdist.keras.optimizers",
}


def __getattr__(name: str):
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'simdist' has no attribute {name!r}")
    module = _importlib.import_module(target)
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
