"""Per-thread execution state: active tapes, device scopes, function depth, variable creators.

Everything that TF keeps in its eager context lives here, one copy per thread, so that the
replica runner can give each replica thread its own device and tapes while the results
never depend on which thread ran first.
"""

from __future__ import annotations

import threading

__all__ = ["state", "num_replicas_in_sync", "ProcessState", "process_state", "mark_runtime_started"]


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.tapes: list = []  # active GradientTapes, innermost last
        self.device_stack: list[str] = []  # canonical device names, innermost last
        self.function_depth = 0  # > 0 while inside a simdist.function call
        self.variable_creators: list = []  # variable_creator_scope stack, innermost last
        self.strategy_stack: list = []  # entered strategy scopes, innermost last
        self.replica_context = None  # set on replica threads while strategy.run runs fn
        self.process = None  # a ProcessState of this thread's own (a fresh runtime), or None
        self.name_scope = ""  # the current tf.name_scope ("" or "outer/inner/")


state = _ThreadState()


def num_replicas_in_sync() -> int:
    """Replicas in the current strategy (1 outside any strategy).

    ``tf.nn.compute_average_loss`` and the optimizers ask this; the distribute package sets
    ``state.strategy_stack`` / ``state.replica_context`` when a strategy is entered or run.
    """
    if state.replica_context is not None:
        return state.replica_context.num_replicas_in_sync
    if state.strategy_stack:
        return state.strategy_stack[-1].num_replicas_in_sync
    return 1


class ProcessState:
    """What TF keeps once per process: whether the eager runtime has started (the first
    tensor, variable or device listing starts it; collective ops must be configured before)."""

    def __init__(self) -> None:
        self.runtime_started = False
        self.collectives_configured = False
        self.op_determinism = False  # tf.config.experimental.enable_op_determinism() was called


_process_state = ProcessState()
# Set by simdist.backends.worker_context: a virtual cluster's worker thread has its own.
worker_state_hook = None


def process_state() -> ProcessState:
    """This process's state (a virtual cluster's worker: that worker's; a thread given a
    fresh runtime of its own by ``simdist.testing.fresh_runtime``: that one)."""
    if state.process is not None:
        return state.process
    if worker_state_hook is not None:
        own = worker_state_hook()
        if own is not None:
            return own
    return _process_state


def mark_runtime_started() -> None:
    """Record that the eager runtime has started in this process (or worker)."""
    process_state().runtime_started = True
