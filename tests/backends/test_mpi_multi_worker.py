"""The multi-worker scenario under ``mpiexec`` gives the virtual cluster's weights, bit for bit."""

from __future__ import annotations

import json
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


@pytest.mark.slow
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


@pytest.mark.slow
@needs_mpi
@pytest.mark.parametrize("workers,local", [(2, 2), (4, 1)])
def test_every_strategy_collective_under_mpi_equals_the_virtual_cluster(workers, local):
    sys.path.insert(0, str(mpi_spawn.SCRIPTS))
    try:
        import strategy_ops
    finally:
        sys.path.remove(str(mpi_spawn.SCRIPTS))
    from simdist.sim import launch

    virtual = launch(strategy_ops.program, workers=workers, devices_per_worker=local, args=(local,))
    job = mpi_spawn.run_script("strategy_ops.py", str(local), ranks=workers, timeout=90)
    assert job.returncode == 0, job.stderr
    # ranks' lines may interleave in the forwarded stdout: pick the objects out
    lines = [json.loads(m) for m in re.findall(r"RESULT (\{[^}]*\})", job.stdout)]
    assert sorted(r["worker"] for r in lines) == list(range(workers)), "not one world"
    assert {r["digest"] for r in lines} == {r["digest"] for r in virtual}
    assert len({r["digest"] for r in virtual}) == 1  # every worker holds the same results


@needs_mpi
def test_a_rank_that_dies_ends_the_job():
    job = mpi_spawn.run_script("die_on_rank.py", ranks=2, timeout=60)
    assert job.returncode != 0
    assert job.seconds < 30
    assert "unreachable" not in job.stdout


@needs_mpi
def test_the_native_allreduce_option_runs_the_scenario():
    command = [
        mpi_spawn.launcher(),
        "-n",
        "2",
        sys.executable,
        "-m",
        "mpi4py",
        SCENARIO,
        "--devices-per-worker",
        "1",
        "--steps",
        "4",
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=mpi_spawn.REPO,
        env=mpi_spawn.clean_env(MPIEXEC_TIMEOUT="100", SIMDIST_MPI_NATIVE_ALLREDUCE="1"),
    )
    assert done.returncode == 0, done.stderr
    assert "2 worker(s)" in done.stdout and _digest(done.stdout)
