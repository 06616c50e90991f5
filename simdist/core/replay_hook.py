"""Where a training replay listens: hook calls that do nothing unless a listener is set.

``strategy.run`` calls :func:`run_starting` before its replicas start and
:func:`run_finished` with their results; an optimizer's cross-replica ``apply_gradients``
calls :func:`optimizer_updated` with the variables it updated. With no listener each call
is one module-global read and a return; this module imports nothing. The listener is
:mod:`simdist.sim.replay` (``simdist sensitivity``), which counts training steps, takes
each step's per-replica losses and the updated weights, and may stop the program by
raising from :func:`run_starting` once it has seen enough steps.
"""

from __future__ import annotations

__all__ = ["listener", "set_listener", "run_starting", "run_finished", "optimizer_updated"]

_listener = None  # the active simdist.sim.replay recorder, or None


def listener():
    """The active listener, or None."""
    return _listener


def set_listener(value) -> None:
    """Install ``value`` as the listener (None removes it)."""
    global _listener
    _listener = value


def run_starting(strategy) -> None:
    """A ``strategy.run`` is about to start its replicas (the listener may raise to stop)."""
    if _listener is not None:
        _listener.run_starting(strategy)


def run_finished(strategy, results: list) -> None:
    """A ``strategy.run`` returned; ``results`` holds each local replica's return value."""
    if _listener is not None:
        _listener.run_finished(strategy, results)


def optimizer_updated(strategy, variables: list) -> None:
    """An optimizer updated ``variables`` across ``strategy``'s replicas."""
    if _listener is not None:
        _listener.optimizer_updated(strategy, variables)
