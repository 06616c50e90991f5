"""Starting real MPI jobs from the tests: find the launcher, clean the environment, time out.

The parent (pytest) never imports mpi4py itself: a parent that initialised MPI would leak
launcher variables into the child job.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import simdist

INSTALL = "pip install 'simdist[mpich]'"
REPO = Path(simdist.__file__).resolve().parent.parent
SCRIPTS = Path(__file__).resolve().parent / "mpi_scripts"
# Variables a launcher (or an MPI-initialised parent) sets; a child mpiexec must not see them.
_LAUNCHER_PREFIXES = ("OMPI_", "PMIX_", "PMI_", "HYDRA_", "MPIR_", "MPI_LOCALNRANKS")


def launcher() -> str | None:
    """The ``mpiexec`` next to this Python (a venv's [mpich] extra), else the one on PATH."""
    return shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")


def missing() -> str | None:
    """Why MPI jobs cannot run here (None when they can)."""
    if importlib.util.find_spec("mpi4py") is None:
        return f"mpi4py is not installed ({INSTALL})"
    if launcher() is None:
        return f"no mpiexec next to {sys.executable} or on PATH ({INSTALL})"
    return None


def clean_env(**extra: str) -> dict[str, str]:
    """The parent's environment without launcher variables, simdist importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LAUNCHER_PREFIXES)}
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + path if path else "")
    env.update(extra)
    return env


@dataclasses.dataclass(frozen=True)
class Job:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run_script(
    script: str,
    *args: str,
    ranks: int | None,
    timeout: float = 60.0,
    env: dict | None = None,
    mpi4py: bool = False,
) -> Job:
    """Runs ``mpi_scripts/<script>`` under ``mpiexec -n ranks`` (``None``: plain python);
    ``mpi4py=True``: as ``python -m mpi4py <script>``.

    ``env`` adds variables after the launcher ones are removed. ``MPIEXEC_TIMEOUT`` makes
    the launcher kill a hung job first; the subprocess timeout is the backstop after it (a
    hung job fails the test, never hangs it).
    """
    runner = ["-m", "mpi4py"] if mpi4py else []
    command = [sys.executable, *runner, str(SCRIPTS / script), *args]
    if ranks is not None:
        command = [launcher(), "-n", str(ranks), *command]
    env = clean_env(MPIEXEC_TIMEOUT=str(int(timeout)), **(env or {}))
    start = time.perf_counter()
    try:
        done = subprocess.run(
            command, env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout + 15
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(
            f"{' '.join(command)} did not finish within {timeout + 15:.0f} s: a hang\n"
            f"stdout: {exc.stdout}\nstderr: {exc.stderr}"
        ) from None
    return Job(done.returncode, done.stdout, done.stderr, time.perf_counter() - start)
