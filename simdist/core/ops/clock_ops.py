"""``tf.timestamp``: the wall-clock time in seconds since the Unix epoch, as float64.

The one op of simdist whose value depends on when it runs; it is not seeded and nothing in
simdist's own arithmetic reads it. As in TF, it refuses to run once the program has called
``tf.config.experimental.enable_op_determinism()``.
"""

from __future__ import annotations

import time

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.context import process_state
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["timestamp"]


def timestamp(name=None) -> Tensor:
    """Seconds since 1970-01-01 UTC, a scalar float64 tensor (microsecond resolution).

    Raises:
        FailedPreconditionError: op determinism is enabled (a clock is not deterministic).
    """
    if process_state().op_determinism:
        raise errors.FailedPreconditionError(
            "Timestamp cannot be called when determinism is enabled [Op:Timestamp]; "
            "tf.config.experimental.enable_op_determinism() was called in this process."
        )
    return make_tensor(np.float64(time.time()), dtypes.float64)
