"""``fresh_runtime``: run a block as if it were a new process's startup (for tests).

TF lets a program configure devices (``tf.config.set_logical_device_configuration``,
``set_visible_devices``) and collective ops only before its runtime starts, once per
process. A test suite runs many programs in one process; inside ``fresh_runtime()`` the
current thread has a runtime of its own that has not started yet, with its own device
configuration (starting from the process's physical devices), so such a program runs as
at its startup. Leaving the block forgets that configuration; the process's own is
untouched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from simdist.core.context import ProcessState, state

__all__ = ["fresh_runtime"]


@contextlib.contextmanager
def fresh_runtime() -> Iterator[ProcessState]:
    """Give the current thread a runtime that has not started (and its own devices)."""
    previous = state.process
    state.process = ProcessState()
    try:
        yield state.process
    finally:
        state.process = previous
