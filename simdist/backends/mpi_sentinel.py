"""A rank that dies mid-job fails the job, under plain ``mpiexec -n N python -m mpi4py``.

What MPICH's launcher (Hydra, ``src/pm/hydra/proxy/pmip_cb.c``) does when a rank's process
ends without ``MPI_Finalize``: its proxy sees the rank's PMI socket close, *presets the exit
status of every other rank to 0* and kills their process groups with SIGKILL. The job's
status is the OR of the ranks' statuses, so a rank that ends with ``os._exit(0)`` makes the
whole job exit 0, and the others get no chance to say so (SIGKILL cannot be caught). No code
runs in a process that ``os._exit``s, so the check must live in another process, and it must
act before the proxy's SIGKILL.

So the MPI transport starts, at its creation, one *sentinel* per rank
(:mod:`simdist.backends.mpi_sentinel_main`, a child process of the rank, in its process
group, importing only the standard library). The sentinel holds a copy of the rank's PMI
socket (``PMI_FD``): while it lives, the socket does not close when the rank dies, so the
proxy's kill-and-report-0 path does not run. The rank tells its sentinel, on a pipe, when a
transport is created (``join``), its goodbye at the end of the program (``goodbye``,
:mod:`simdist.backends.exit_guard`), and that it is aborting the job itself (``abort``); it
records each cross-worker call in a small shared ring (a ``memfd``: a memory write per call,
no system call, which the sentinel reads only once the rank has ended). When the rank's
process ends with a transport open and neither goodbye nor abort said, the sentinel prints
``WorkerFailedError`` naming the worker, its pid and host, and its last calls, and sends the
PMI ``abort`` command on the rank's socket: the launcher ends every rank and exits with
status 1, as after ``MPI_Abort``.

A rank's own ``MPI_Finalize`` deregisters the socket, so a sentinel changes nothing in a
job that ends well. Without ``PMI_FD`` (Open MPI, a singleton run) there is no sentinel. A
rank started under :mod:`simdist.backends.mpi_guard` has its guard instead.
"""

from __future__ import annotations

import mmap
import os
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from simdist.backends import process_env

__all__ = ["start", "report", "call", "new_ring", "record", "PROGRAM"]

PROGRAM = Path(__file__).with_name("mpi_sentinel_main.py")
_PMI_FD_VAR = "PMI_FD"  # MPICH/Hydra hands its PMI socket over as a descriptor

# The ring of the last cross-worker calls: the number of calls so far (8 bytes, little
# endian), then SLOTS labels of SLOT bytes each (UTF-8, NUL-padded); call n is in slot
# (n - 1) % SLOTS. mpi_sentinel_main reads the same layout.
SLOTS, SLOT = 8, 120
RING_BYTES = 8 + SLOTS * SLOT

_lock = threading.Lock()
_pipe: int | None = None  # the write end, once this process has a sentinel
_ring: mmap.mmap | None = None
_child: subprocess.Popen | None = None  # kept so it is never collected while it runs


def _pmi_socket() -> int | None:
    raw = os.environ.get(_PMI_FD_VAR, "")
    if not raw.isdigit():
        return None
    try:
        return int(raw) if stat.S_ISSOCK(os.fstat(int(raw)).st_mode) else None
    except OSError:
        return None


def start(rank: int, size: int) -> bool:
    """Give this rank a sentinel (once per process) and tell it a transport joined.

    Returns whether a sentinel watches this rank. None is started for a one-rank world,
    without MPICH's ``PMI_FD``, or under :mod:`simdist.backends.mpi_guard`.
    """
    global _pipe, _ring, _child
    with _lock:
        if _pipe is None:
            pmi = _pmi_socket()
            if size < 2 or pmi is None or process_env.mpi_guard_fd() is not None:
                return False
            read_end, write_end = os.pipe()
            ring_fd, ring = new_ring()
            try:
                _child = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(PROGRAM), str(read_end), str(pmi)]
                    + [str(ring_fd), str(rank), str(size), str(os.getpid())],
                    pass_fds=(read_end, pmi, ring_fd),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                )
            except OSError as exc:
                os.close(write_end)
                ring.close()
                sys.stderr.write(f"simdist: worker {rank}: no sentinel ({exc})\n")
                return False
            finally:
                os.close(read_end)
                os.close(ring_fd)
            os.set_blocking(write_end, False)  # a report never blocks the rank
            _pipe, _ring = write_end, ring
    report("join")
    return True


def report(line: str) -> None:
    """Tell this rank's sentinel (if any) ``line``: ``goodbye``, ``abort``, ..."""
    if _pipe is None:
        return
    try:
        os.write(_pipe, f"{line}\n".encode(errors="replace"))
    except OSError:
        pass  # the sentinel is gone, or its pipe is full: a report is never worth a wait


def call(count: int, label: str) -> None:
    """Record that cross-worker call number ``count`` (from 1; ``label``) began."""
    if _ring is not None:
        record(_ring, count, label)


def new_ring() -> tuple[int, mmap.mmap]:
    """A shared ring of the last calls: its descriptor (for the sentinel) and its map."""
    fd = os.memfd_create("simdist-calls") if hasattr(os, "memfd_create") else _temp_file()
    os.ftruncate(fd, RING_BYTES)
    return fd, mmap.mmap(fd, RING_BYTES)


def _temp_file() -> int:
    fd, path = tempfile.mkstemp(prefix="simdist-calls-")
    os.unlink(path)
    return fd


def record(ring: mmap.mmap, count: int, label: str) -> None:
    """Write call ``count`` (``label``) into ``ring``: the label first, then the count."""
    start = 8 + (count - 1) % SLOTS * SLOT
    ring[start : start + SLOT] = label.encode(errors="replace")[:SLOT].ljust(SLOT, b"\0")
    ring[0:8] = count.to_bytes(8, "little")
