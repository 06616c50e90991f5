"""What a multi-process worker raises when a peer fails, leaves, diverges or is late.

Both process transports (MPI, and processes started one per ``TF_CONFIG``) exchange, with
every control-plane call, what kind of message it is: ``"call"`` (a cross-worker call, with
its label and the caller's count of calls so far), ``"bye"`` (the worker left its program,
after N calls) or ``"abort"`` (the worker failed, with the error's type and message). The
functions here turn what arrived into the error every worker raises, naming the culprit,
its task and the last cross-worker calls on each side.
"""

from __future__ import annotations

from collections.abc import Sequence

from simdist import errors
from simdist.backends.base import WorkerFailedError
from simdist.distribute.runner import CollectiveMismatchError

__all__ = [
    "history_lines",
    "left_program",
    "out_of_step",
    "from_abort",
    "died",
    "late",
    "abort_message",
]


def _who(worker: int, names: Sequence[str] | None) -> str:
    return f"worker {worker} ({names[worker]})" if names else f"worker {worker}"


def history_lines(histories: dict[int, Sequence[str]], names=None) -> str:
    lines = ["Last cross-worker calls per worker:"]
    for worker in sorted(histories):
        shown = ", ".join(histories[worker]) or "(none)"
        lines.append(f"  {_who(worker, names)}: {shown}")
    return "\n".join(lines)


def left_program(
    peer: int,
    peer_calls: int,
    me: int,
    waiting_in: str,
    histories: dict[int, Sequence[str]],
    names=None,
) -> CollectiveMismatchError:
    """``peer`` said goodbye while worker ``me`` waits in a cross-worker call."""
    return CollectiveMismatchError(
        f"{_who(peer, names).capitalize()} left its program after {peer_calls} cross-worker "
        f"calls (it returned or exited), while {_who(me, names)} waits in {waiting_in}: the "
        "workers made different numbers of collective calls (one step fewer or more, a "
        "collective inside a branch only some workers take, sys.exit in the loop). Real "
        "hardware would hang here.\n" + history_lines(histories, names)
    )


def out_of_step(peer: int, what: str, me: int, waiting_in: str, names=None):
    """``peer`` sent ``what`` where worker ``me`` expected its part of ``waiting_in``."""
    return CollectiveMismatchError(
        f"{_who(peer, names).capitalize()} sent {what} while {_who(me, names)} waits in "
        f"{waiting_in}: the workers are in different cross-worker calls. Every worker must "
        "make the same collective calls, in the same order."
    )


def abort_message(worker: int, error: BaseException) -> tuple:
    """The ``("abort", ...)`` message a failing worker sends to its peers."""
    return ("abort", worker, type(error).__name__, str(error))


def from_abort(peer: int, kind: str, text: str, me: int, names=None) -> BaseException:
    """The error a worker raises when ``peer`` reports that it failed with ``kind: text``."""
    if kind == "DeadlineExceededError":
        return errors.DeadlineExceededError(
            None, None, f"{_who(peer, names).capitalize()} gave up: {text}"
        )
    if kind == "CollectiveMismatchError":
        return CollectiveMismatchError(f"{_who(peer, names).capitalize()} reports: {text}")
    return WorkerFailedError(
        f"{_who(me, names).capitalize()} stops, as every worker of the job does: "
        f"{_who(peer, names)} failed with {kind}: {text}",
        peer,
    )


def died(peer: int, me: int, waiting_in: str, names=None, address: str = "") -> WorkerFailedError:
    """``peer``'s process is gone without a goodbye (``os._exit``, a signal, a crash)."""
    where = f" at {address}" if address else ""
    return WorkerFailedError(
        f"{_who(peer, names).capitalize()}{where} died: its process ended without leaving its "
        f"program (os._exit, a signal, a crash, out of memory) while {_who(me, names)} was in "
        f"{waiting_in}. Restart the job (from the last checkpoint).",
        peer,
    )


def late(missing: Sequence[int], me: int, waiting_in: str, timeout: float, source: str, names=None):
    """``missing`` workers did not arrive within the deadline (listed in the error's
    ``late_workers``)."""
    who = ", ".join(_who(w, names) for w in missing)
    error = errors.DeadlineExceededError(
        None,
        None,
        f"{_who(me, names).capitalize()} waited {timeout:g} s in {waiting_in} for {who}, "
        f"which did not arrive ({source}). Is it blocked (a lock, an input pipeline, an "
        "endless loop) or just slow? Raise the deadline if it is slow.",
    )
    error.late_workers = list(missing)
    return error
