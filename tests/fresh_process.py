"""A Python program run in a fresh process, for the process-wide policies that
``import simdist`` sets (BLAS threads, the allocator, the packing buffers)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable


def run_program(program: str, env: dict[str, str], drop: Callable[[str], bool]) -> str:
    """The stdout of ``python -c program`` with this process's environment, less the
    variables ``drop`` names, plus ``env``; a non-zero exit fails the test with its stderr."""
    environ = {k: v for k, v in os.environ.items() if not drop(k)}
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**environ, **env},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def key_values(stdout: str) -> dict[str, str]:
    """``key value`` lines as a dict."""
    return dict(line.split(" ", 1) for line in stdout.splitlines())
