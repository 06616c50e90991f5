"""``tf.config.threading``: TensorFlow's two thread-pool sizes, on simdist's threads.

* **intra-op** (threads that one op may use): simdist's intra-op threads, which cut the
  convolutions and poolings into blocks (``simdist.core.intra_op``, docs/performance.md).
  ``set_intra_op_parallelism_threads(n)`` runs each such op on ``n`` threads; ``0`` (TF's
  "the system picks") restores simdist's default (``SIMDIST_INTRA_OP_THREADS``, else one
  per CPU the process may use). Results are the same bits whatever the number.
* **inter-op** (ops run side by side): simdist runs one op at a time (a replica's ops in
  program order, one replica at a time), so the value is kept and returned and changes
  nothing.

As in TF, both may be set only before the runtime starts (the first tensor, variable or
device listing): afterwards ``RuntimeError``. The getters return what was set (``0`` until
then), as TF's do.
"""

from __future__ import annotations

from simdist.core import intra_op
from simdist.core.context import process_state

__all__ = [
    "get_inter_op_parallelism_threads",
    "get_intra_op_parallelism_threads",
    "set_inter_op_parallelism_threads",
    "set_intra_op_parallelism_threads",
]

_set = {"intra": 0, "inter": 0}


def _checked(num_threads, what: str) -> int:
    if process_state().runtime_started:  # checked first, as TF does
        raise RuntimeError(
            f"{what.capitalize()} op parallelism cannot be modified after initialization."
        )
    if isinstance(num_threads, bool) or not hasattr(num_threads, "__index__"):
        raise TypeError(
            f"'{type(num_threads).__name__}' object cannot be interpreted as an integer "
            f"({what} parallelism threads)."
        )
    n = num_threads.__index__()
    if n < 0:
        raise ValueError(
            f"{what.capitalize()} op parallelism threads must be 0 (the default) or a "
            f"positive number of threads, got {n}."
        )
    return n


def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """Threads each blocked op (convolutions, pooling) runs on; 0 for simdist's default.

    Raises:
        TypeError: not an integer. ValueError: negative.
        RuntimeError: the runtime has started (tensors or variables were made).
    """
    n = _checked(num_threads, "intra")
    intra_op.set_intra_op_threads(n if n else intra_op.intra_op_threads_from_environment())
    _set["intra"] = n


def get_intra_op_parallelism_threads() -> int:
    """What ``set_intra_op_parallelism_threads`` set (0: the default)."""
    return _set["intra"]


def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Recorded only: simdist runs one op at a time (module docstring).

    Raises:
        TypeError: not an integer. ValueError: negative.
        RuntimeError: the runtime has started (tensors or variables were made).
    """
    _set["inter"] = _checked(num_threads, "inter")


def get_inter_op_parallelism_threads() -> int:
    """What ``set_inter_op_parallelism_threads`` set (0: the default)."""
    return _set["inter"]
