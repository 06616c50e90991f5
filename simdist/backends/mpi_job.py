"""An MPI job around the workers: importing mpi4py, the one-world guard, and aborting the
whole job when a rank raises (so nothing waits forever).

Plain ``mpiexec -n 2 python script.py`` hangs when one rank raises before simdist's MPI
transport exists (it waits in ``MPI_Finalize`` while the others wait for it; once a
multi-worker strategy has made the transport, an uncaught exception aborts the job:
:mod:`simdist.backends.exit_guard`). Wrap the script's body in :func:`run_worker_main`, or
start it as ``mpiexec -n 2 python -m mpi4py script.py``: either way an exception on one rank
aborts the whole job at once. ``MPIEXEC_TIMEOUT=<seconds>`` bounds a job that deadlocks for
any other reason. A rank that ends mid-job without raising (``os._exit(0)``, a signal) is
named and fails the job through its sentinel (:mod:`simdist.backends.mpi_sentinel`).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from simdist.backends import mpi_sentinel

__all__ = ["INSTALL_HINT", "check_world_size", "import_mpi", "run_worker_main"]

INSTALL_HINT = (
    "pip install 'simdist[mpich]' (mpi4py with the MPICH runtime, self-contained) or "
    "pip install 'simdist[mpi]' (mpi4py alone, for a cluster's own MPI)"
)
# Launcher variables that say how many processes mpiexec started (MPICH/Hydra, Open MPI).
_LAUNCHER_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


def import_mpi():
    """``mpi4py.MPI``, imported on first use.

    Raises:
        ImportError: mpi4py is not installed; the message gives the install commands.
    """
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(f"the MPI backend needs mpi4py: {INSTALL_HINT}") from exc
    return MPI


def check_world_size(env: Mapping[str, str], world_size: int, library: str = "") -> None:
    """Fails when the launcher started more processes than MPI joined into one world.

    An mpi4py linked against one MPI but started by another MPI's ``mpiexec`` runs N
    separate one-rank copies that all believe they are alone (and exit 0).

    Args:
        env: the process environment (``os.environ``).
        world_size: ``MPI.COMM_WORLD.Get_size()``.
        library: mpi4py's MPI library description, quoted in the message.

    Raises:
        RuntimeError: ``PMI_SIZE`` / ``OMPI_COMM_WORLD_SIZE`` says N > 1 processes were
            started but the world holds ``world_size != N`` ranks.
    """
    for var in _LAUNCHER_SIZE_VARS:
        text = env.get(var, "").strip()
        if not text.isdigit() or int(text) <= 1 or int(text) == world_size:
            continue
        lib = f" ({library})" if library else ""
        raise RuntimeError(
            f"the launcher started {text} processes ({var}={text}) but MPI.COMM_WORLD holds "
            f"{world_size}: mpi4py's MPI{lib} is not the MPI of this mpiexec, so every process "
            f"runs alone. Start the job with the mpiexec of mpi4py's MPI (with the [mpich] "
            f"extra it is {os.path.join(os.path.dirname(sys.executable), 'mpiexec')}; put that "
            f"bin/ first on PATH), or build mpi4py against the cluster's MPI "
            f"(pip install --no-binary mpi4py mpi4py)"
        )


def _flush_before_abort() -> None:
    """Flush stderr and give the launcher's output forwarder a moment: MPI_Abort kills the
    processes at once, and a loaded machine can otherwise lose the message naming the rank."""
    sys.stdout.flush()
    sys.stderr.flush()
    time.sleep(0.25)


def run_worker_main(main: Callable[[], Any]) -> Any:
    """Runs ``main()``; if it raises, reports the rank and aborts the whole MPI job.

    Without this a rank that raises under plain ``mpiexec`` leaves every other rank
    waiting forever. With it the failing rank prints
    ``simdist: worker <rank> of <size> raised <Type>: <message>`` and the traceback to
    stderr, then calls ``MPI.COMM_WORLD.Abort(1)``: the launcher ends every process and
    exits nonzero. (``mpiexec -n N python -m mpi4py script.py`` gives the same abort
    without the message.) ``SystemExit`` with status 0 or ``None`` passes through.

    Args:
        main: the worker's body, called with no arguments.

    Returns:
        What ``main()`` returned.

    Raises:
        BaseException: only when mpi4py is absent (a one-process run): ``main``'s own.
    """
    try:
        return main()
    except SystemExit as exc:
        if exc.code in (None, 0):
            raise
        _abort_job(exc)
    except BaseException as exc:  # noqa: BLE001 - any failure must end every rank
        _abort_job(exc)
    return None  # unreachable: Abort does not return


def _abort_job(exc: BaseException) -> None:
    try:
        MPI = import_mpi()
    except ImportError:
        raise exc from None
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    sys.stderr.write(
        f"simdist: worker {rank} of {size} raised {type(exc).__name__}: {exc}\n{detail}"
        f"simdist: aborting the MPI job (all {size} workers)\n"
    )
    mpi_sentinel.report("abort")  # the job aborts for this reason: the sentinel keeps quiet
    _flush_before_abort()
    world.Abort(1)
