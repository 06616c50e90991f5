"""``tf.distribute.experimental_set_strategy``: make a strategy this thread's default."""

from __future__ import annotations

import threading

from simdist.core.context import state

__all__ = ["experimental_set_strategy"]

_local = threading.local()  # .entered: (strategy, its entered scope) or None


def experimental_set_strategy(strategy) -> None:
    """Enter ``strategy.scope()`` until the next call (``None``: leave it), as TF does.

    Unlike ``with strategy.scope():`` the scope stays entered after the call returns; a later
    call with another strategy leaves the first one's scope and enters the other's.

    Raises:
        RuntimeError: called inside a ``with strategy.scope():`` block (TF's rule).
    """
    entered = getattr(_local, "entered", None)
    if entered is not None:  # as TF: leave the previous one first, then check
        _local.entered = None
        entered[1].__exit__(None, None, None)
    if state.strategy_stack or state.replica_context is not None:
        raise RuntimeError("Must not be called inside a `tf.distribute.Strategy` scope.")
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _local.entered = (strategy, scope)
