"""os.environ during a launch: each worker thread reads and writes its own TF_CONFIG."""

import json
import os
import textwrap

import simdist as tf
from simdist.sim.worker_environ import WorkerEnviron

MAIN_PY = textwrap.dedent(
    """
    import json
    import os

    import simdist as tf

    tf_config = json.loads(os.environ["TF_CONFIG"])
    num_workers = len(tf_config["cluster"]["worker"])
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    global_batch_size = 64 * num_workers
    task = (tf_config["task"]["type"], tf_config["task"]["index"])
    resolved = strategy.cluster_resolver.task_id
    """
)


def test_a_tutorial_main_py_reads_its_own_tf_config(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    script = tmp_path / "main.py"
    script.write_text(MAIN_PY)
    real = os.environ
    results = tf.sim.launch_script(str(script), workers=3, devices_per_worker=1)
    assert [g["task"] for g in results] == [("worker", 0), ("worker", 1), ("worker", 2)]
    assert [g["global_batch_size"] for g in results] == [192] * 3
    assert [g["resolved"] for g in results] == [0, 1, 2]
    assert os.environ is real and "TF_CONFIG" not in os.environ


def test_a_worker_sets_and_deletes_its_own_tf_config_only(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", "{}")
    monkeypatch.setenv("SIMDIST_TEST_SHARED", "x")

    def worker():
        mine = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
        os.environ["TF_CONFIG"] = json.dumps({"mine": mine})
        seen = os.getenv("TF_CONFIG")
        copy = os.environ.copy()
        del os.environ["TF_CONFIG"]
        gone = "TF_CONFIG" not in os.environ and os.environ.get("TF_CONFIG") is None
        return seen, copy["TF_CONFIG"], gone, os.environ["SIMDIST_TEST_SHARED"]

    results = tf.sim.launch(worker, workers=2, devices_per_worker=0)
    assert results == [
        ('{"mine": 0}', '{"mine": 0}', True, "x"),
        ('{"mine": 1}', '{"mine": 1}', True, "x"),
    ]
    assert os.environ["TF_CONFIG"] == "{}"  # the process's value is untouched
    assert not isinstance(os.environ, WorkerEnviron)


def test_the_real_environ_comes_back_when_a_worker_raises():
    real = os.environ

    def worker():
        raise KeyError("boom")

    try:
        tf.sim.launch(worker, workers=2, devices_per_worker=0)
    except KeyError:
        pass
    assert os.environ is real


def test_other_threads_and_variables_go_to_the_real_environment(monkeypatch):
    real = {"TF_CONFIG": "process", "HOME": "/h"}
    view = WorkerEnviron(real)
    assert view["TF_CONFIG"] == "process" and len(view) == 2
    view["NEW"] = "1"
    assert real["NEW"] == "1"
    del view["NEW"]
    assert "NEW" not in real and "NEW" not in view


def test_simdist_launch_runs_a_tutorial_main_py(tmp_path, capsys, monkeypatch):
    from simdist.cli import main as cli_main

    monkeypatch.delenv("TF_CONFIG", raising=False)
    script = tmp_path / "main.py"
    script.write_text(MAIN_PY + 'print("task", task, "of", num_workers)\n')
    assert cli_main(["launch", "--workers", "2", "--devices-per-worker", "1", str(script)]) == 0
    out = capsys.readouterr().out
    assert "task ('worker', 0) of 2" in out and "task ('worker', 1) of 2" in out
