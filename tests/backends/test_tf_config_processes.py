"""Processes started one per TF_CONFIG train the API page's example to the virtual bits."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import mpi_spawn
import pytest

from simdist.sim.processes import ProcessClusterError, free_ports, run_processes

pytestmark = pytest.mark.slow
SCENARIO = str(mpi_spawn.REPO / "scenarios" / "multi_worker.py")


def _digest(stdout: str) -> str:
    found = re.findall(r"^weights digest: ([0-9a-f]+)$", stdout, flags=re.M)
    assert len(found) == 1, stdout
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


@pytest.mark.parametrize(
    "workers,chief,local,communication",
    [(2, False, 2, "AUTO"), (2, True, 1, "RING")],
)
def test_tf_config_processes_equal_the_virtual_cluster_bitwise(
    workers, chief, local, communication
):
    args = ("--devices-per-worker", str(local), "--steps", "6", "--communication", communication)
    run = run_processes(
        [SCENARIO, *args], workers, chief=chief, env=mpi_spawn.clean_env(), timeout=120
    ).check()
    tasks = workers + chief
    assert f"{tasks} worker(s), {tasks * local} replicas in sync" in run.tasks[0].stdout
    assert [t.stdout for t in run.tasks[1:]] == [""] * (tasks - 1)  # only worker 0 reports
    assert _digest(run.tasks[0].stdout) == _virtual("--workers", str(tasks), *args)


def test_two_shells_with_nothing_but_tf_config_meet_with_the_derived_key():
    ports = free_ports(2)
    cluster = {"worker": [f"localhost:{p}" for p in ports]}
    env = {k: v for k, v in mpi_spawn.clean_env().items() if k != "SIMDIST_JOB_KEY"}
    procs = []
    for index in (1, 0):
        config = {"cluster": cluster, "task": {"type": "worker", "index": index}}
        procs.append(
            subprocess.Popen(
                [sys.executable, SCENARIO, "--devices-per-worker", "1", "--steps", "3"],
                env=dict(env, TF_CONFIG=json.dumps(config)),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=mpi_spawn.REPO,
            )
        )
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    digest = _digest(outs[1][0])
    assert digest == _virtual("--devices-per-worker", "1", "--steps", "3")
    if mpi_spawn.missing() is None:  # and the same digest as mpiexec prints
        done = subprocess.run(
            [
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
                "3",
            ],
            capture_output=True,
            text=True,
            timeout=90,
            cwd=mpi_spawn.REPO,
            env=mpi_spawn.clean_env(MPIEXEC_TIMEOUT="60"),
        )
        assert done.returncode == 0, done.stderr
        assert _digest(done.stdout) == digest


def test_a_failed_task_is_named_by_check():
    run = run_processes(["-c", "import sys; sys.exit(3)"], 2, timeout=30)
    assert not run.ok
    with pytest.raises(
        ProcessClusterError,
        match=r"2 of 2 tasks of the process cluster failed:\n  worker:. \(exit 3\)",
    ):
        run.check()


def test_a_hung_job_is_killed_at_its_timeout():
    run = run_processes(["-c", "import time; time.sleep(60)"], 1, timeout=1, grace=1)
    assert run.tasks[0].returncode != 0 and "ran past its 1 s" in run.tasks[0].killed


def test_check_cluster_uses_the_real_transport_when_asked():
    ports = free_ports(3)
    config = {
        "cluster": {
            "chief": [f"localhost:{ports[0]}"],
            "worker": [f"127.0.0.1:{p}" for p in ports[1:]],
        }
    }
    done = subprocess.run(
        [sys.executable, "-m", "simdist.cli", "check-cluster", "--processes", json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env=mpi_spawn.clean_env(),
        cwd=mpi_spawn.REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok (3 replicas in sync)") == 3
    remote = {"cluster": {"worker": ["192.0.2.1:2222", "localhost:2222"]}}
    done = subprocess.run(
        [sys.executable, "-m", "simdist.cli", "check-cluster", "--processes", json.dumps(remote)],
        capture_output=True,
        text=True,
        timeout=60,
        env=mpi_spawn.clean_env(),
        cwd=mpi_spawn.REPO,
    )
    assert done.returncode == 2 and "--task JOB:INDEX" in done.stderr


def test_check_cluster_task_joins_the_rendezvous_as_one_task_per_host():
    ports = free_ports(2)
    config = json.dumps({"cluster": {"worker": [f"localhost:{p}" for p in ports]}})
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "simdist.cli", "check-cluster", "--task", f"worker:{i}", config],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=mpi_spawn.clean_env(),
            cwd=mpi_spawn.REPO,
        )
        for i in (0, 1)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert "worker:1 at localhost" in outs[1][0] and "worker 1 of 2, ok" in outs[1][0]
