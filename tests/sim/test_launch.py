"""The virtual-cluster launcher, fault plans and ``simdist check-cluster``."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import simdist as tf
from simdist import errors
from simdist.cli import main as cli_main
from simdist.sim import FaultPlan, launch, launch_script
from simdist.sim.check_cluster import check_cluster


def test_each_worker_has_its_own_task_devices_seed_and_names():
    def prog():
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        tf.random.set_seed(resolver.task_id)
        layer = tf.keras.layers.Dense(1)
        return (
            resolver.task_type,
            resolver.task_id,
            len(tf.config.list_logical_devices("GPU")),
            float(tf.random.uniform([])),
            layer.name,
        )

    results = launch(prog, workers=3, devices_per_worker=2)
    assert [r[:3] for r in results] == [("worker", i, 2) for i in range(3)]
    assert len({r[3] for r in results}) == 3  # seeds are per worker, as per process
    assert {r[4] for r in results} == {"dense"}  # layer names count per worker
    alone = launch(prog, workers=1, devices_per_worker=2)[0]
    assert alone[3] == results[0][3]


def test_a_chief_comes_first_in_worker_order():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        resolver = strategy.cluster_resolver
        return resolver.task_type, resolver.task_id, strategy.extended._worker_index

    cluster = {"chief": ["c:1"], "worker": ["w:1", "w:2"]}
    assert launch(prog, cluster=cluster, devices_per_worker=1) == [
        ("chief", 0, 0),
        ("worker", 0, 1),
        ("worker", 1, 2),
    ]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"workers": 0}, "workers must be an int >= 1"),
        ({"devices_per_worker": -1}, "devices_per_worker must be >= 0"),
        ({"cluster": {"ps": ["p:1"], "worker": ["w:1"]}}, "ParameterServerStrategy"),
        ({"cluster": {"evaluator": ["e:1"]}}, "no chief or worker"),
    ],
)
def test_bad_launch_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        launch(lambda: None, **kwargs)


def test_a_straggler_past_the_deadline_is_reported_not_hung():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        return strategy.run(lambda: tf.constant(1.0))

    plan = FaultPlan().slow_worker(1, seconds=1.0)
    with pytest.raises(errors.DeadlineExceededError, match="Worker 1 neither reached"):
        launch(prog, workers=2, devices_per_worker=1, faults=plan, timeout=0.2)


def test_a_slow_worker_changes_no_result():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        ids = strategy.run(
            lambda: tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, "float32")
        )
        return float(strategy.reduce("SUM", ids, axis=None))

    plan = FaultPlan().slow_worker(0, seconds=0.01)
    got = launch(prog, workers=2, devices_per_worker=2, faults=plan)
    assert got == launch(prog, workers=2, devices_per_worker=2) == [6.0, 6.0]


def test_fault_plan_rejects_bad_entries():
    with pytest.raises(ValueError, match="step >= 1"):
        FaultPlan().kill_worker(0, step=0)
    with pytest.raises(ValueError, match="seconds >= 0"):
        FaultPlan().slow_worker(0, seconds=-1)


def test_launch_script_runs_a_file_as_main_on_every_worker(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        textwrap.dedent("""
        import sys
        import simdist as tf
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        if __name__ == "__main__":
            total = strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
            ARGS = sys.argv[1:]
            TOTAL = float(total)
    """)
    )
    results = launch_script(str(script), workers=2, devices_per_worker=2, argv=["--x", "1"])
    assert [(g["ARGS"], g["TOTAL"]) for g in results] == [(["--x", "1"], 4.0)] * 2


def test_check_cluster_reports_every_task():
    config = {"cluster": {"chief": ["c:1"], "worker": ["w:1", "w:2"], "evaluator": ["e:1"]}}
    report = check_cluster(config, devices_per_worker=2)
    assert report.ok
    assert [(t.job, t.index, t.worker) for t in report.tasks] == [
        ("chief", 0, 0),
        ("worker", 0, 1),
        ("worker", 1, 2),
        ("evaluator", 0, None),
    ]
    assert "ok (6 replicas in sync)" in report.format()


def test_check_cluster_cli_exit_codes(tmp_path, capsys):
    good = tmp_path / "tf_config.json"
    good.write_text(
        json.dumps({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}})
    )
    assert cli_main(["check-cluster", str(good)]) == 0
    assert "OK: every training task joined" in capsys.readouterr().out
    assert cli_main(["check-cluster", '{"cluster": {"worker": ["a:1", "a:1"]}}']) == 2
    assert "to both worker[0] and worker[1]" in capsys.readouterr().err
    assert cli_main(["check-cluster", '{"cluster": {"worker": "a:1"']) == 2
    assert "invalid cluster" in capsys.readouterr().err


def test_check_cluster_says_a_ps_cluster_is_not_a_collective_one():
    report = check_cluster({"cluster": {"worker": ["w:1"], "ps": ["p:1"]}})
    assert not report.ok and "ParameterServerStrategy" in report.detail


def test_np_arrays_exchanged_between_workers_are_copies():
    def prog():
        from simdist.backends.worker_context import current_transport

        transport = current_transport()
        mine = np.full(2, float(transport.worker_index))
        got = transport.all_gather_object(mine)
        got[0][0] = 99.0  # must not reach worker 0's copy
        return mine.tolist(), [g.tolist() for g in transport.all_gather_object(mine)]

    results = launch(prog, workers=2, devices_per_worker=0)
    assert results[0] == ([0.0, 0.0], [[0.0, 0.0], [1.0, 1.0]])


def test_simdist_launch_command_runs_a_script_on_every_worker(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text(
        textwrap.dedent("""
        import sys
        import simdist as tf
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        total = strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
        print(f"worker {strategy.extended._worker_index}: {float(total)} {sys.argv[1:]}")
    """)
    )
    assert (
        cli_main(["launch", "--workers", "2", "--devices-per-worker", "1", str(script), "x"]) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out == ["worker 0: 2.0 ['x']", "worker 1: 2.0 ['x']"]
