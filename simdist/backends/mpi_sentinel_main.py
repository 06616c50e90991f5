"""The program of an MPI rank's sentinel (see :mod:`simdist.backends.mpi_sentinel`).

Run by path with the standard library only (``python -I -S mpi_sentinel_main.py READ_FD
PMI_FD RANK SIZE PID``), as a child of the rank it watches: it starts in a few milliseconds and
imports neither simdist nor NumPy. It holds a copy of the rank's PMI socket, so MPICH's
process manager does not see the socket close when the rank dies; reads the rank's reports
(``join``, ``call N label``, ``goodbye``, ``abort``) from the pipe; and when the rank's
process ends (the pipe's end, or its pidfd) while a transport of it is open, prints which
worker ended and after which calls, then asks the process manager to abort the job with
exit status 1 (a PMI-1 ``abort`` command on the rank's PMI socket).
"""

import os
import select
import signal
import socket
import sys
import time

_HISTORY = 8
_EXIT_STATUS = 1
_FORWARD = 0.25  # seconds the launcher gets to forward the message before the abort


def _rank_ended(pipe: int, pidfd: int | None, parent: int) -> bytes:
    """Everything the rank wrote, once its process has ended."""
    data = bytearray()
    watched = [pipe] if pidfd is None else [pipe, pidfd]
    while True:
        ready, _, _ = select.select(watched, [], [], 0.5)
        if pipe in ready:
            chunk = os.read(pipe, 65536)
            if not chunk:
                return bytes(data)  # every copy of the write end is closed: the rank ended
            data += chunk
        if (pidfd is not None and pidfd in ready) or os.getppid() != parent:
            os.set_blocking(pipe, False)  # the rank ended: take what it wrote before
            try:
                while chunk := os.read(pipe, 65536):
                    data += chunk
            except BlockingIOError:
                pass
            return bytes(data)


def _state(data: bytes) -> tuple[bool, int, list[str]]:
    """Whether a transport was open when the rank ended, its call count, its last calls."""
    open_transports, calls, history, aborted = 0, 0, [], False
    for line in data.decode(errors="replace").splitlines():
        word, _, rest = line.partition(" ")
        if word == "join":
            open_transports += 1
        elif word == "goodbye":
            open_transports -= 1
        elif word == "abort":
            aborted = True
        elif word == "call":
            count, _, label = rest.partition(" ")
            calls = int(count) if count.isdigit() else calls
            history = [*history, label][-_HISTORY:]
    return open_transports > 0 and not aborted, calls, history


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a job-wide Ctrl-C ends the sentinel too
    pipe, pmi, rank, size, parent = (int(a) for a in argv[:5])
    pidfd = None  # without a pidfd (old kernel) the pipe's end and getppid() still tell
    if os.getppid() == parent:  # else the rank ended already
        try:
            pidfd = os.pidfd_open(parent)
        except (AttributeError, OSError):
            pass
    data = _rank_ended(pipe, pidfd, parent)
    expected, calls, history = _state(data)
    if not expected:
        return 0
    last = f" (last: {', '.join(history)})" if history else ""
    sys.stderr.write(
        f"simdist: WorkerFailedError: worker {rank} of {size} (pid {parent} on "
        f"{socket.gethostname()}) ended in the middle of the job, after {calls} cross-worker "
        f"calls{last}, without its goodbye (os._exit, a signal, a crash, out of memory) while "
        "the other workers still expect it. Restart the job (from the last checkpoint).\n"
        f"simdist: aborting the MPI job (all {size} workers) with exit status {_EXIT_STATUS}\n"
    )
    sys.stderr.flush()
    time.sleep(_FORWARD)
    try:
        os.write(pmi, f"cmd=abort exitcode={_EXIT_STATUS}\n".encode())
    except OSError:
        return 1  # the process manager is gone already
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
