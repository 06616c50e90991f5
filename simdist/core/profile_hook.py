"""Where a ``simdist.sim.profile`` listens: hook calls that do nothing unless one is active.

The strategies call :func:`record_collective` for every cross-replica reduction,
:func:`record_components` for every ``all_gather`` and wrap each ``strategy.run`` in
:func:`step`; Keras layers call :func:`layer_called`, ``GradientTape.gradient`` calls
:func:`gradient_done` and optimizers call :func:`optimizer_updated`. With no profile active
each call is one module-global read (``_active is None``) and a return; this module imports
nothing, so nobody pays an import cost.
The recorder itself lives in :mod:`simdist.sim.profile`.
"""

from __future__ import annotations

import contextlib

__all__ = [
    "record_collective",
    "record_components",
    "step",
    "active",
    "layer_called",
    "gradient_done",
    "optimizer_updated",
]

_active = None  # the active simdist.sim.profile recorder, or None
_NO_STEP = contextlib.nullcontext()


def active():
    """The active profile recorder, or None."""
    return _active


def record_collective(kind: str, arrays: list, algorithm: str | None = None) -> None:
    """Note one collective over ``arrays`` (one array per replica, replica order).

    Args:
        kind: ``"all_reduce"``, ``"all_gather"``...
        arrays: each replica's contribution.
        algorithm: the algorithm the cross-device op runs (None: the selector decides).
    """
    if _active is not None:
        _active.collective(kind, arrays, algorithm)


def record_components(kind: str, per_replica: list, algorithm: str | None = None) -> None:
    """:func:`record_collective` for each component of ``per_replica[r][i]`` (a nest's leaves)."""
    if _active is not None:
        for i in range(len(per_replica[0])):
            _active.collective(kind, [replica[i] for replica in per_replica], algorithm)


def step(strategy):
    """A context marking one ``strategy.run`` (a shared no-op context when not profiling)."""
    if _active is None:
        return _NO_STEP
    return _active.step(strategy)


def layer_called(layer, inputs) -> None:
    """A Keras layer ran its forward pass on ``inputs`` (inside a profiled step)."""
    if _active is not None:
        _active.layer_called(layer, inputs)


def gradient_done() -> None:
    """A ``GradientTape.gradient`` call finished (the backward pass ran)."""
    if _active is not None:
        _active.gradient_done()


def optimizer_updated(optimizer, pairs) -> None:
    """An optimizer applied ``pairs`` of (gradient, variable) across replicas."""
    if _active is not None:
        _active.optimizer_updated(optimizer, pairs)
