"""MPITransport under real ``mpiexec`` jobs: bitwise equality with the one-process executor,
one world, and a raising rank that ends the job."""

from __future__ import annotations

import json
import subprocess
import sys

import mpi_spawn
import pytest

from simdist.backends.mpi import INSTALL_HINT, check_world_size

pytestmark = pytest.mark.mpi
needs_mpi = pytest.mark.skipif(mpi_spawn.missing() is not None, reason=str(mpi_spawn.missing()))


def summary(job: mpi_spawn.Job) -> list[dict]:
    lines = [line for line in job.stdout.splitlines() if line.startswith("SUMMARY ")]
    assert job.returncode == 0, f"rc {job.returncode}\n{job.stdout}\n{job.stderr}"
    assert len(lines) == 1, (
        f"expected one summary from rank 0 of one world, got {len(lines)} (mpiexec started "
        f"separate one-rank copies?)\n{job.stdout}\n{job.stderr}"
    )
    return json.loads(lines[0][len("SUMMARY ") :])["reports"]


@pytest.mark.slow
@needs_mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_every_collective_bitwise_equal_to_executor(ranks):
    reports = summary(mpi_spawn.run_script("check_collectives.py", ranks=ranks))
    # one world: every process reports the same size, equal to -n, and a distinct rank
    assert [r["rank"] for r in reports] == list(range(ranks))
    assert {r["size"] for r in reports} == {ranks}
    assert len({r["pid"] for r in reports}) == ranks
    assert all(r["cases"] >= 250 for r in reports)
    failures = [f for r in reports for f in r["failures"]]
    assert failures == []


@needs_mpi
@pytest.mark.parametrize("ranks,failing", [(2, 1), (4, 2)])
def test_raising_rank_aborts_job_and_is_named(ranks, failing):
    job = mpi_spawn.run_script("raise_on_rank.py", "--rank", str(failing), ranks=ranks)
    assert job.returncode != 0
    assert job.seconds < 30
    assert f"simdist: worker {failing} of {ranks} raised ValueError: injected failure" in job.stderr
    assert "unreachable" not in job.stdout


@needs_mpi
def test_transport_abort_ends_the_job():
    job = mpi_spawn.run_script("raise_on_rank.py", "--rank", "0", "--abort", ranks=2)
    assert job.returncode != 0
    assert job.seconds < 30
    assert "simdist: worker 0 of 2 aborts: injected abort on rank 0" in job.stderr
    assert "unreachable" not in job.stdout


@needs_mpi
def test_mixed_mpi_guard_in_a_real_process():
    # MPICH ignores Open MPI's variable: the world has 1 rank where the "launcher" says 2
    job = mpi_spawn.run_script(
        "world_guard.py", ranks=None, timeout=30, env={"OMPI_COMM_WORLD_SIZE": "2"}
    )
    if job.stdout.startswith("SKIP"):  # pragma: no cover - mpi4py linked to Open MPI
        pytest.skip(job.stdout)
    assert job.returncode == 0, job.stdout + job.stderr
    assert "GUARD the launcher started 2 processes (OMPI_COMM_WORLD_SIZE=2)" in job.stdout


def test_world_guard_rules():
    check_world_size({}, 1)
    check_world_size({"PMI_SIZE": "4"}, 4)
    check_world_size({"PMI_SIZE": "1"}, 1)
    check_world_size({"OMPI_COMM_WORLD_SIZE": "garbage"}, 1)
    with pytest.raises(RuntimeError, match=r"PMI_SIZE=4\) but MPI.COMM_WORLD holds 1"):
        check_world_size({"PMI_SIZE": "4"}, 1)
    with pytest.raises(RuntimeError, match="OMPI_COMM_WORLD_SIZE=2.*mpiexec"):
        check_world_size({"OMPI_COMM_WORLD_SIZE": "2"}, 1)


def test_install_hint_names_both_extras():
    assert "pip install 'simdist[mpich]'" in INSTALL_HINT
    assert "pip install 'simdist[mpi]'" in INSTALL_HINT


def test_missing_mpi4py_names_the_install_commands(monkeypatch):
    from simdist.backends import mpi

    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r"needs mpi4py: pip install 'simdist\[mpich\]'"):
        mpi.import_mpi()
    with pytest.raises(ImportError, match=r"simdist\[mpi\]"):
        mpi.MPITransport()


def test_importing_the_backend_does_not_import_mpi4py():
    code = "import sys, simdist.backends.mpi; print('mpi4py' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=mpi_spawn.clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
