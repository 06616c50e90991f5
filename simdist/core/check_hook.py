"""Where ``simdist.sim.check_step`` listens: hook calls that do nothing unless a check runs.

A step check runs a user's program twice (N replicas, then one replica) and compares what
reaches the optimizer. The strategies call :func:`run_inputs` / :func:`run_done` around every
``strategy.run``, the optimizers call :func:`gradients_applied` with the aggregated
gradients, and a few ops note that they ran (:func:`note`: ``compute_average_loss`` and its
arguments, ``scale_regularization_loss``, random ops and their seeds, metric updates, layer
calls). Device and cluster shapes pass through :func:`shape` so that the one-replica run
can shrink them. With no check active each call is one module-global read and a return;
this module imports nothing. The recorder lives in :mod:`simdist.sim.check_step_record`.
"""

from __future__ import annotations

__all__ = ["active", "run_inputs", "run_done", "gradients_applied", "note", "shape", "reported"]

_active = None  # the active check_step recorder, or None


def active():
    """The active step-check recorder, or None."""
    return _active


def run_inputs(strategy, per_replica: list, given) -> list:
    """``strategy.run`` is about to run on ``per_replica`` (each replica's (args, kwargs),
    picked from ``given``, the (args, kwargs) it was called with)."""
    if _active is None:
        return per_replica
    return _active.run_inputs(strategy, per_replica, given)


def run_done(strategy, results: list) -> None:
    """``strategy.run`` returned ``results`` (one structure per local replica)."""
    if _active is not None:
        _active.run_done(strategy, results)


def gradients_applied(strategy, variables: list, grads: list, before: list) -> None:
    """An optimizer applied the aggregated ``grads`` to ``variables`` (values ``before``)."""
    if _active is not None:
        _active.gradients_applied(strategy, variables, grads, before)


def note(kind: str, **details) -> None:
    """An op of interest ran (``kind``: ``"compute_average_loss"``, ``"random"``...)."""
    if _active is not None:
        _active.note(kind, details)


def shape(kind: str, value):
    """A device or cluster count the program asked for (``kind``: ``"gpus"``, ``"tpu"``,
    ``"workers"``, ``"devices_per_worker"``); the check may replace it."""
    if _active is None:
        return value
    return _active.shape(kind, value)


def reported(strategy, n: int) -> int:
    """``strategy.num_replicas_in_sync`` as the user's own code outside ``run`` reads it."""
    if _active is None:
        return n
    return _active.reported(strategy, n)
