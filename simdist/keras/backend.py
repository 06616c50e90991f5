"""``tf.keras.backend``: float type, fuzz factor, unique layer names and ``clear_session``.

Layer names are unique per class prefix (``dense``, ``dense_1``...) within a session;
``clear_session`` starts the counts again. The counter is process-wide and guarded by a lock,
so names depend only on the order in which the program creates layers.
"""

from __future__ import annotations

import re
import threading

from simdist.core import dtypes
from simdist.distribute.worker_context import current_worker

__all__ = [
    "clear_session",
    "epsilon",
    "set_epsilon",
    "floatx",
    "set_floatx",
    "get_uid",
    "reset_uids",
    "unique_object_name",
    "to_snake_case",
]

_EPSILON = 1e-7
_FLOATX = "float32"
_LOCK = threading.Lock()
_UIDS: dict = {}  # name prefix -> count, and _OBSERVED -> the names given explicitly
_OBSERVED = ("observed names",)  # a key no prefix can be


def epsilon() -> float:
    """The fuzz factor used to keep logs and divisions finite (1e-7 by default)."""
    return _EPSILON


def set_epsilon(value: float) -> None:
    """Set the fuzz factor returned by :func:`epsilon`."""
    global _EPSILON
    _EPSILON = float(value)


def floatx() -> str:
    """The default float type of layers and initializers, as a string (``'float32'``)."""
    return _FLOATX


def set_floatx(value: str) -> None:
    """Set the default float type: ``'float16'``, ``'float32'`` or ``'float64'``.

    Raises:
        ValueError: ``value`` is not one of those names.
    """
    global _FLOATX
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value!r}; use 'float16', 'float32' or 'float64'.")
    _FLOATX = str(dtypes.as_dtype(value).name)


def _uids() -> dict:
    """The name counts of this process (of this worker, in a virtual cluster)."""
    worker = current_worker()
    return _UIDS if worker is None else worker.uids


def get_uid(prefix: str = "") -> int:
    """Count one more object named ``prefix`` and return the count (1 for the first)."""
    with _LOCK:
        uids = _uids()
        uids[prefix] = uids.get(prefix, 0) + 1
        return uids[prefix]


def reset_uids() -> None:
    """Forget every name count (the next ``Dense`` is ``dense`` again)."""
    with _LOCK:
        _uids().clear()


def observe_object_name(name: str) -> None:
    """Note a name given explicitly to a layer (op layers' generated names avoid it)."""
    with _LOCK:
        _uids().setdefault(_OBSERVED, set()).add(name)


def unique_object_name(prefix: str, avoid_observed_names: bool = False) -> str:
    """``prefix`` the first time, then ``prefix_1``, ``prefix_2``...

    With ``avoid_observed_names`` (Keras 2's op layers), a name some layer was given
    explicitly is skipped.
    """
    with _LOCK:
        uids = _uids()
        avoid = uids.get(_OBSERVED, ()) if avoid_observed_names else ()
        while True:
            number = uids.get(prefix, 0)
            uids[prefix] = number + 1
            name = prefix if number == 0 else f"{prefix}_{number}"
            if name not in avoid:
                return name


def clear_session() -> None:
    """Reset Keras's global state: layer name counts start again from zero."""
    reset_uids()


def to_snake_case(name: str) -> str:
    """``MaxPooling2D`` -> ``max_pooling2d``: how a class name becomes a layer name."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    snake = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return "private" + snake if snake.startswith("_") else snake
