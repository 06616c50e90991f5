"""Real processes, one worker misbehaving: every job ends nonzero, in bounded time, naming it.

The same fault script runs as processes started one per TF_CONFIG
(:func:`simdist.sim.processes.run_processes`) and under ``mpiexec -n 2`` and ``-n 4``. A rank
that ends mid-job (``os._exit(0)``, a signal) is reported by its sentinel
(:mod:`simdist.backends.mpi_sentinel`), under the plain launch commands.
"""

from __future__ import annotations

import re

import mpi_spawn
import pytest

from simdist.sim.processes import run_processes

pytestmark = pytest.mark.slow
needs_mpi = pytest.mark.skipif(mpi_spawn.missing() is not None, reason=str(mpi_spawn.missing()))
FAULTS = str(mpi_spawn.SCRIPTS / "faults.py")
BOUND = 20.0  # seconds any faulty job may take (its deadlines are 1-3 s)

# fault -> (extra arguments, what the error says about the culprit, worker 1)
CASES = {
    "raise": ((), r"ValueError: injected failure on worker 1"),
    "return_early": ((), r"[Ww]orker 1 (\(worker:1\) )?left its program"),
    "extra": ((), r"[Ww]orker 0 (\(worker:0\) )?left its program after 9 cross-worker calls"),
    "exit0": ((), r"[Ww]orker 1 (\(worker:1\) )?left its program after 3 cross-worker calls"),
    "sleep": (
        ("--timeout-seconds", "0.5", "--sleep", "1.5"),
        r"DeadlineExceededError: (Worker 0 \(worker:0\) gave up: )?Worker 0 (\(worker:0\) )?"
        r"waited 0.5 s .* for worker 1",
    ),
}


def _tf_config_job(fault: str, workers: int = 2):
    extra, _ = CASES.get(fault, ((), ""))
    run = run_processes(
        [FAULTS, "--fault", fault, *extra],
        workers,
        env={"SIMDIST_WORKER_TIMEOUT": "8", **mpi_spawn.clean_env()},
        timeout=BOUND,
        grace=5,
    )
    return run


def test_tf_config_processes_without_a_fault_all_finish():
    run = _tf_config_job("none")
    assert run.ok, [t.stderr for t in run.tasks]
    assert [t.stdout.split() for t in run.tasks] == [["done", "0", "12.0"], ["done", "1", "12.0"]]


@pytest.mark.parametrize("fault", sorted(CASES))
def test_a_faulty_tf_config_process_ends_every_process_nonzero_naming_it(fault):
    _, pattern = CASES[fault]
    run = _tf_config_job(fault)
    assert all(t.returncode != 0 for t in run.tasks), [(t.task, t.returncode) for t in run.tasks]
    assert not any(t.killed for t in run.tasks), "a process had to be killed: it hung"
    assert all(t.seconds < BOUND for t in run.tasks)
    assert all(re.search(pattern, t.stderr) for t in run.tasks), [
        t.stderr[-600:] for t in run.tasks
    ]


def test_a_killed_tf_config_process_is_named_by_the_others():
    run = _tf_config_job("kill")
    culprit, survivor = run.tasks[1], run.tasks[0]
    assert culprit.returncode == -9 and survivor.returncode != 0 and not survivor.killed
    assert re.search(r"Worker 1 \(worker:1\) at 127.0.0.1:\d+ died", survivor.stderr)


# What the sentinel of a rank that ended mid-job prints (simdist.backends.mpi_sentinel).
ENDED = (
    r"WorkerFailedError: worker 1 of {ranks} \(pid \d+ on \S+\) ended in the middle of the "
    r"job, after 3 cross-worker calls \(last: .*\), without its goodbye"
)


# A waiting rank that sees the process gone first says so too (then both lines may appear;
# whichever aborts first ends the job). Without the sentinel neither line appeared: MPICH
# killed the waiting ranks at once and the job exited 0 (two ranks) or 9 (four).
DIED = r"WorkerFailedError: Worker 1 died: its process ended without leaving its program"


def _ended_mid_job(job: mpi_spawn.Job, ranks: int) -> None:
    assert job.returncode == 1, (job.returncode, job.stderr[-1500:])
    assert job.seconds < BOUND
    named = re.search(ENDED.format(ranks=ranks), job.stderr) or re.search(DIED, job.stderr)
    assert named, job.stderr[-1500:]
    assert f"aborting the MPI job (all {ranks} workers)" in job.stderr
    assert "done" not in job.stdout


@needs_mpi
@pytest.mark.mpi
@pytest.mark.parametrize("fault", ["kill", "term"])
def test_an_mpi_rank_killed_by_a_signal_fails_the_job_naming_it(fault):
    job = mpi_spawn.run_script("faults.py", "--fault", fault, ranks=2, timeout=BOUND)
    _ended_mid_job(job, 2)


def test_a_tf_config_process_that_dies_with_status_0_is_named_by_the_others():
    run = _tf_config_job("os_exit0")
    culprit, survivor = run.tasks[1], run.tasks[0]
    assert culprit.returncode == 0 and survivor.returncode != 0 and not run.ok
    assert re.search(r"Worker 1 \(worker:1\) at 127.0.0.1:\d+ died", survivor.stderr)
    assert "done" not in survivor.stdout


@needs_mpi
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("fault", sorted(CASES))
def test_a_faulty_mpi_rank_ends_the_job_nonzero_naming_it(fault, ranks):
    extra, pattern = CASES[fault]
    if ranks == 4 and fault == "extra":  # worker 1 makes the extra call: any peer reports it
        pattern = r"[Ww]orker \d left its program after 9 cross-worker calls"
    job = mpi_spawn.run_script(
        "faults.py",
        "--fault",
        fault,
        *extra,
        ranks=ranks,
        timeout=BOUND,
        env={"SIMDIST_WORKER_TIMEOUT": "8"},
    )
    assert job.returncode != 0, job.stderr
    assert job.seconds < BOUND
    assert re.search(pattern, job.stderr), job.stderr[-1500:]
    assert "simdist: aborting the MPI job" in job.stderr or "could not end" in job.stderr


@needs_mpi
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_an_mpi_rank_that_dies_with_status_0_fails_the_plain_mpi4py_job_naming_it(ranks):
    # Without its sentinel MPICH's launcher would preset the others' status to 0, SIGKILL
    # them and exit 0 (docs/multi-process.md); the sentinel makes it abort with status 1.
    job = mpi_spawn.run_script(
        "faults.py", "--fault", "os_exit0", ranks=ranks, timeout=BOUND, mpi4py=True
    )
    _ended_mid_job(job, ranks)


@needs_mpi
@pytest.mark.mpi
def test_an_mpi_rank_that_dies_with_status_0_inside_run_worker_main_fails_the_job():
    job = mpi_spawn.run_script("faults.py", "--fault", "os_exit0", "--main", ranks=2, timeout=BOUND)
    _ended_mid_job(job, 2)


def _guarded(fault: str, ranks: int) -> mpi_spawn.Job:
    """The fault script under ``mpiexec -n ranks python -m simdist.backends.mpi_guard``."""
    import subprocess
    import sys
    import time

    command = [
        mpi_spawn.launcher(),
        "-n",
        str(ranks),
        sys.executable,
        "-m",
        "simdist.backends.mpi_guard",
        FAULTS,
        "--fault",
        fault,
    ]
    start = time.perf_counter()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=BOUND + 15,
        cwd=mpi_spawn.REPO,
        env=mpi_spawn.clean_env(MPIEXEC_TIMEOUT=str(int(BOUND))),
    )
    return mpi_spawn.Job(done.returncode, done.stdout, done.stderr, time.perf_counter() - start)


@needs_mpi
@pytest.mark.mpi
def test_under_the_guard_a_rank_that_dies_with_status_0_fails_the_job_naming_it():
    # The guard, not the sentinel (a guarded rank has none): for launchers without PMI_FD.
    job = _guarded("os_exit0", 2)
    assert job.returncode != 0 and job.seconds < BOUND
    assert "worker 1 exited with status 0 in the middle of the job" in job.stderr
    assert "done" not in job.stdout


@needs_mpi
@pytest.mark.mpi
def test_the_guard_passes_a_clean_job_through():
    job = _guarded("none", 2)
    assert job.returncode == 0, job.stderr
    # the ranks' lines may interleave in the forwarded stdout: pick them out
    assert sorted(re.findall(r"done (\d) 12\.0", job.stdout)) == ["0", "1"]


def test_simdist_worker_timeout_bounds_tf_config_processes():
    run = run_processes(
        [FAULTS, "--fault", "sleep", "--sleep", "1.5"],
        2,
        env={**mpi_spawn.clean_env(), "SIMDIST_WORKER_TIMEOUT": "0.5"},
        timeout=BOUND,
        grace=5,
    )
    assert all(t.returncode != 0 for t in run.tasks)
    assert all("DeadlineExceededError" in t.stderr for t in run.tasks)
    assert "waited 0.5 s" in run.tasks[0].stderr and "for worker 1" in run.tasks[0].stderr


@needs_mpi
@pytest.mark.mpi
def test_simdist_worker_timeout_bounds_an_mpi_job():
    job = mpi_spawn.run_script(
        "faults.py",
        "--fault",
        "sleep",
        "--sleep",
        "1.5",
        ranks=2,
        timeout=BOUND,
        env={"SIMDIST_WORKER_TIMEOUT": "0.5"},
    )
    assert job.returncode != 0 and job.seconds < BOUND
    assert re.search(r"DeadlineExceededError: Worker 0 waited 0.5 s .* for worker 1", job.stderr)
