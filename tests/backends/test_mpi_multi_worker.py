"""The multi-worker scenario under ``mpiexec`` gives the virtual cluster's weights, bit for bit."""

from __future__ import annotations

import re
import subprocess
import sys

import mpi_spawn
import pytest

pytestmark = pytest.mark.mpi
needs_mpi = pytest.mark.skipif(mpi_spawn.missing() is not None, reason=str(mpi_spawn.missing()))
SCENARIO = str(mpi_spawn.REPO / "scenarios" / "multi_worker.py")


def _digest(stdout: str) -> str:
    found = re.findall(r"^weights digest: ([0-9a-f]+)$", stdout, flags=re.M)
    assert len(found) == 1, f"expected one digest line (from the chief only):\n{stdout}"
    return found[0]


def _virtual(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, SCENARIO, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=mpi_spawn.clean_env(),
        cwd=mpi_spawn.REPO,
    )
    assert done.returncode == 0, done.stderr
    return _digest(done.stdout)


def _mpi(ranks: int, *args: str) -> str:
    command = [
        mpi_spawn.launcher(),
        "-n",
        str(ranks),
        sys.executable,
        "-m",
        "mpi4py",
        SCENARIO,
        *args,
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=150,
        cwd=mpi_spawn.REPO,
        env=mpi_spawn.clean_env(MPIEXEC_TIMEOUT="120"),
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"{ranks} worker(s)" in done.stdout, "the ranks did not form one world"
    return _digest(done.stdout)


@needs_mpi
@pytest.mark.parametrize(
    "workers,local,communication",
    [(1, 2, "AUTO"), (2, 2, "AUTO"), (2, 1, "RING"), (4, 1, "AUTO"), (4, 2, "NCCL")],
)
def test_mpi_run_equals_the_virtual_cluster_bitwise(workers, local, communication):
    args = ("--devices-per-worker", str(local), "--steps", "6", "--communication", communication)
    assert _mpi(workers, *args) == _virtual("--workers", str(workers), *args)


@needs_mpi
def test_a_worker_making_another_collective_ends_the_mpi_job_with_an_error():
    job = mpi_spawn.run_script("mismatch.py", ranks=2, timeout=60)
    assert job.returncode != 0
    assert job.seconds < 30
    assert "CollectiveMismatchError" in job.stderr
    assert "worker 1 is in ('all_reduce'" in job.stderr
    assert "unreachable" not in job.stdout
