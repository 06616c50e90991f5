"""The program of an MPI rank's sentinel (see :mod:`simdist.backends.mpi_sentinel`).

Run by path with the standard library only (``python -I -S mpi_sentinel_main.py READ_FD
PMI_FD RING_FD RANK SIZE PID``), as a child of the rank it watches: it starts in a few
milliseconds and imports neither simdist nor NumPy. It holds a copy of the rank's PMI
socket, so MPICH's process manager does not see the socket close when the rank dies; reads
the rank's reports (``join``, ``goodbye``, ``abort``) from the pipe and, at the end, its
last cross-worker calls from the shared ring (layout: :mod:`simdist.backends.mpi_sentinel`);
and when the rank's process ends (the pipe's end, or its pidfd) while a transport of it is
open, prints which worker ended and after which calls, then asks the process manager to
abort the job with exit status 1 (a PMI-1 ``abort`` command on the rank's PMI socket).
"""

import os
import select
import signal
import socket
import sys
import time

_SLOTS, _SLOT = 8, 120  # the ring's layout, as simdist.backends.mpi_sentinel writes it
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


def _expected(data: bytes) -> bool:
    """Whether a transport of the rank was open, and no abort said, when it ended."""
    open_transports, aborted = 0, False
    for line in data.decode(errors="replace").splitlines():
        if line == "join":
            open_transports += 1
        elif line == "goodbye":
            open_transports -= 1
        elif line == "abort":
            aborted = True
    return open_transports > 0 and not aborted


def _calls(ring: int) -> tuple[int, list[str]]:
    """The rank's number of cross-worker calls and the last ones, oldest first."""
    data = os.pread(ring, 8 + _SLOTS * _SLOT, 0)
    if len(data) < 8 + _SLOTS * _SLOT:
        return 0, []
    count = int.from_bytes(data[:8], "little")
    history = []
    for call in range(max(1, count - _SLOTS + 1), count + 1):
        start = 8 + (call - 1) % _SLOTS * _SLOT
        history.append(data[start : start + _SLOT].rstrip(b"\0").decode(errors="replace"))
    return count, history


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a job-wide Ctrl-C ends the sentinel too
    pipe, pmi, ring, rank, size, parent = (int(a) for a in argv[:6])
    pidfd = None  # without a pidfd (old kernel) the pipe's end and getppid() still tell
    if os.getppid() == parent:  # else the rank ended already
        try:
            pidfd = os.pidfd_open(parent)
        except (AttributeError, OSError):
            pass
    if not _expected(_rank_ended(pipe, pidfd, parent)):
        return 0
    calls, history = _calls(ring)
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
