"""``tf.timestamp``: the wall-clock time in seconds since the Unix epoch, as float64.

The one op of simdist whose value depends on when it runs; it is not seeded and nothing in
simdist's own arithmetic reads it.
"""

from __future__ import annotations

import time

import numpy as np

from simdist.core import dtypes
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["timestamp"]


def timestamp(name=None) -> Tensor:
    """Seconds since 1970-01-01 UTC, a scalar float64 tensor (microsecond resolution)."""
    return make_tensor(np.float64(time.time()), dtypes.float64)
