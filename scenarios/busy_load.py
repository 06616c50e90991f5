"""Busy-loop processes beside a benchmark: what a shared machine does to it.

``busy(2)`` starts two Python processes that each spin on one core (as a second experiment,
``pytest -n auto`` or an MPI job would), each bounded in time so that none outlives the
benchmark even if it is killed; leaving the ``with`` block stops them.

    with busy(2, seconds=600):
        ...time something...
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

_SPIN = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"


@contextlib.contextmanager
def busy(processes: int, seconds: float = 900.0) -> Iterator[None]:
    """Run ``processes`` busy loops (each stops by itself after ``seconds``) for the block."""
    if processes < 0:
        raise ValueError(f"busy processes must be >= 0, got {processes}")
    procs = [
        subprocess.Popen([sys.executable, "-c", _SPIN.format(seconds=float(seconds))])
        for _ in range(processes)
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()


def label(processes: int) -> str:
    """How a table names the load: the busy processes added, and the machine's load average
    (1 minute) as the table is printed, so that a "quiet" run on a shared machine shows it."""
    added = "no busy processes added" if processes == 0 else f"{processes} busy processes beside it"
    if hasattr(os, "getloadavg"):
        added += f", load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    return added
