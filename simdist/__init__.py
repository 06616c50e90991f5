"""simdist: tf.distribute semantics on simulated devices, in NumPy. ``import simdist as tf``.

This module is the TF-shaped face: it only re-exports. The implementation lives in
``simdist.core`` (tensors, ops, autodiff), ``simdist.keras``, ``simdist.data`` and, in later
packages, ``simdist.distribute``; simdist's own additions live under names of their own.
"""

from simdist import errors as errors
from simdist.core import *  # noqa: F403 - the core's face is this package's face
from simdist.core import dtypes as dtypes
from simdist.core import nest as nest

__version__ = "0.1.0"
