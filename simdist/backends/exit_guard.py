"""The end of a worker process: it says goodbye, or it tells the others why it failed.

A worker process that leaves its program while the others still expect it (it returned one
step early, called ``sys.exit(0)`` in the loop, or its peers make one collective more) must
not leave them waiting, and must not make the job look successful. So every multi-process
transport is registered here when it is created, and at interpreter exit:

* after an uncaught exception (seen through ``sys.excepthook``), the transport tells every
  peer which worker failed and how (``Transport.abort``): they raise
  :class:`~simdist.backends.base.WorkerFailedError` naming it at once, instead of waiting;
* otherwise the transport says goodbye (``Transport.finish``): every worker announces that
  it left after N cross-worker calls and waits, up to the deadline, for the others' goodbyes
  (a peer still running then, without a call, is not an error).
  A peer still waiting in a collective receives the goodbye instead of its data and raises
  ``CollectiveMismatchError`` naming this worker; this worker, hearing that, prints the
  error and exits with status 1, so the job's exit status is nonzero on both sides.

What no process can see of itself (``os._exit``, a signal, a crash) its peers see: a
closed connection without a goodbye is a dead worker, named in their error.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

__all__ = ["install", "uncaught_exception"]

_transports: list = []
_lock = threading.Lock()
_uncaught: list[BaseException] = []
_installed = False
_previous_hook = sys.excepthook


def uncaught_exception() -> BaseException | None:
    """The exception that is ending this process, if one reached ``sys.excepthook``."""
    return _uncaught[-1] if _uncaught else None


def _excepthook(kind, value, traceback) -> None:
    _uncaught.append(value)
    _previous_hook(kind, value, traceback)


def install(transport) -> None:
    """End ``transport`` at interpreter exit as the module docstring says."""
    global _installed, _previous_hook
    with _lock:
        _transports.append(transport)
        if not _installed:
            _installed = True
            _previous_hook = sys.excepthook
            sys.excepthook = _excepthook
            atexit.register(_at_exit)


def _at_exit() -> None:
    failed = uncaught_exception()
    while _transports:
        transport = _transports.pop()
        if failed is not None:
            transport.abort_quietly(_describe(failed), type(failed).__name__)
            continue
        try:
            transport.finish()
        except BaseException as exc:  # noqa: BLE001 - reported, and the exit status says it
            sys.stdout.flush()
            sys.stderr.write(
                f"simdist: worker {transport.worker_index} of {transport.num_workers} could not "
                f"end its program cleanly: {type(exc).__name__}: {exc}\n"
            )
            sys.stderr.flush()
            transport.abort_quietly(str(exc), type(exc).__name__)
            os._exit(1)


def _describe(error: BaseException) -> str:
    """The error's message with its notes (which replica, worker and task raised it)."""
    notes = " ".join(getattr(error, "__notes__", ()) or ())
    return f"{error} {notes}".strip()
