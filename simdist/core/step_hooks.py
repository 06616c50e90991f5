"""Where simdist's step tools listen: hook calls that do nothing unless a listener is set.

Two tools watch a user's program from inside simdist: the step check
(``simdist check-step``, :mod:`simdist.sim.check_step_record`) and the training replay
(``simdist sensitivity``, :mod:`simdist.sim.replay`). They do not nest, so there is one
listener slot for the process. The strategies, optimizers and a few ops call:

* :func:`run_starting` and :func:`run_inputs` before a ``strategy.run`` starts its replicas
  (the replay may raise to stop the program; the check may feed other inputs), and
  :func:`run_finished` with each local replica's result;
* :func:`gradients_applied` when an optimizer applies gradients under a strategy (summed
  across replicas, or each replica's own with ``experimental_aggregate_gradients=False``),
  with the values the variables had before when :func:`wants_values_before`;
* :func:`note` where an op of interest ran (``compute_average_loss`` and its arguments,
  random ops and their seeds, metric updates, layer calls, ...), :func:`shape` for a device
  or cluster count the program asks for, :func:`reported` for
  ``strategy.num_replicas_in_sync`` read outside ``run``.

With no listener each call is one module-global read and a return; this module imports
nothing. A listener subclasses :class:`Listener` and overrides what it needs.
"""

from __future__ import annotations

__all__ = [
    "Listener",
    "gradients_applied",
    "listener",
    "note",
    "reported",
    "run_finished",
    "run_inputs",
    "run_starting",
    "set_listener",
    "shape",
    "wants_values_before",
]


class Listener:
    """What a step tool may hear; every method does nothing (or passes the value on)."""

    values_before = False  # does gradients_applied need the variables' values before?

    def run_starting(self, strategy) -> None:
        """A ``strategy.run`` is about to start (raise to stop the program)."""

    def run_inputs(self, strategy, per_replica: list, given) -> list:
        """Each replica's (args, kwargs), picked from ``given``; return what they run on."""
        return per_replica

    def run_finished(self, strategy, results: list) -> None:
        """A ``strategy.run`` returned ``results`` (one per local replica)."""

    def gradients_applied(
        self, strategy, variables: list, grads: list, before, aggregated: bool
    ) -> None:
        """An optimizer is about to apply ``grads`` to ``variables`` (``aggregated``: summed
        across replicas; ``before``: their values now, or None unless :attr:`values_before`)."""

    def note(self, kind: str, details: dict) -> None:
        """An op of interest ran."""

    def shape(self, kind: str, value):
        """A device or cluster count the program asked for; return the one to use."""
        return value

    def reported(self, strategy, n: int) -> int:
        """``num_replicas_in_sync`` as code outside ``run`` reads it."""
        return n


_listener: Listener | None = None


def listener() -> Listener | None:
    """The active listener, or None."""
    return _listener


def set_listener(value: Listener | None) -> None:
    """Install ``value`` (None removes it).

    Raises:
        RuntimeError: another listener is active (the tools do not nest).
    """
    global _listener
    if value is not None and _listener is not None and value is not _listener:
        raise RuntimeError(
            "a simdist step check or replay is already running in this process; they do not "
            "nest. Run one at a time."
        )
    _listener = value


def run_starting(strategy) -> None:
    if _listener is not None:
        _listener.run_starting(strategy)


def run_inputs(strategy, per_replica: list, given) -> list:
    if _listener is None:
        return per_replica
    return _listener.run_inputs(strategy, per_replica, given)


def run_finished(strategy, results: list) -> None:
    if _listener is not None:
        _listener.run_finished(strategy, results)


def wants_values_before() -> bool:
    return _listener is not None and _listener.values_before


def gradients_applied(strategy, variables: list, grads: list, before, aggregated: bool) -> None:
    if _listener is not None:
        _listener.gradients_applied(strategy, variables, grads, before, aggregated)


def note(kind: str, **details) -> None:
    if _listener is not None:
        _listener.note(kind, details)


def shape(kind: str, value):
    if _listener is None:
        return value
    return _listener.shape(kind, value)


def reported(strategy, n: int) -> int:
    if _listener is None:
        return n
    return _listener.reported(strategy, n)
