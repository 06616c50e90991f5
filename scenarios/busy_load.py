"""Busy-loop processes beside a benchmark: what a shared machine does to it.

``busy(2)`` starts two Python processes that each spin on one core (as a second experiment,
``pytest -n auto`` or an MPI job would), each bounded in time so that none outlives the
benchmark even if it is killed; leaving the ``with`` block stops them.

    with busy(2, seconds=600):
        ...time something...
"""

from __future__ import annotations

import contextlib
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
    """How a table names the load: "quiet" or "N busy processes"."""
    return "quiet" if processes == 0 else f"{processes} busy processes beside it"
