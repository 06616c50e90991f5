"""A rank's guard under ``mpiexec``: a worker that leaves the job with status 0 fails the job.

Under MPICH's launcher every rank has a sentinel that does this without a wrapper
(:mod:`simdist.backends.mpi_sentinel`); the guard is kept for launchers that hand a rank no
``PMI_FD`` (and so no sentinel), though it was measured under MPICH only. A launcher may
treat a rank that ends with status 0 as done, even when it ended by ``os._exit(0)`` in the
middle of training while its peers still expect it. No code runs in a process that
``os._exit``s, so the check runs in a parent. Start the job as

    mpiexec -n 2 python -m simdist.backends.mpi_guard train.py [args...]

Each rank's guard runs ``python -m mpi4py train.py`` as its child (which inherits the
launcher's PMI connection and is the real MPI process) and a pipe: the child's MPI transport
writes ``joined`` when it is created and ``goodbye`` after the goodbye at the end of the
program (:mod:`simdist.backends.exit_guard`). A child that exits 0 after ``joined`` but
before ``goodbye`` left its peers behind: the guard prints which rank did and exits 1, so
the launcher ends the job with a nonzero status. Any other status passes through.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from simdist import settings
from simdist.backends import process_env

__all__ = ["report", "main"]

_PMI_FD_VARS = ("PMI_FD",)  # MPICH/Hydra hands its PMI socket over as a descriptor


def report(stage: str) -> None:
    """Tell this rank's guard (if any) that the transport reached ``stage``."""
    raw = process_env.mpi_guard_fd()
    if raw is None:
        return
    try:
        os.write(int(raw), f"{stage}\n".encode())
    except (OSError, ValueError):
        pass  # no guard listening: nothing to tell


def _die_with_parent() -> None:
    """In the child, before exec: end when the guard ends (the launcher kills guards)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m mpi4py *argv`` as this rank's child; return the job-safe status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write("usage: mpiexec -n N python -m simdist.backends.mpi_guard script.py ...\n")
        return 2
    read_end, write_end = os.pipe()
    env = process_env.with_blas_threads(
        dict(os.environ, **{settings.env_name("mpi_guard_fd"): str(write_end)})
    )
    keep = [int(os.environ[v]) for v in _PMI_FD_VARS if os.environ.get(v, "").isdigit()]
    child = subprocess.Popen(
        [sys.executable, "-m", "mpi4py", *args],
        env=env,
        pass_fds=(write_end, *keep),
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )
    os.close(write_end)
    stages = set()
    with os.fdopen(read_end, "rb") as pipe:
        for line in pipe:
            stages.add(line.decode(errors="replace").strip())
    status = child.wait()
    if status == 0 and "joined" in stages and "goodbye" not in stages:
        rank = os.environ.get("PMI_RANK", "?")
        sys.stderr.write(
            f"simdist: worker {rank} exited with status 0 in the middle of the job (before its "
            "goodbye: os._exit, or an exit that skipped the interpreter's shutdown) while the "
            "other workers expected it; failing the job.\n"
        )
        sys.stderr.flush()
        return 1
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
