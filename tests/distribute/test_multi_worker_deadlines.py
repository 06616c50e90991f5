"""Deadlines and worker identity in the virtual cluster: what the process transports promise too."""

from __future__ import annotations

import ast
import pathlib
import time

import pytest

import simdist as tf
from simdist import errors
from simdist.sim import launch


def _straggler(timeout_seconds):
    def program():
        options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=timeout_seconds)
        strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
        if strategy.extended._worker_index == 1:
            time.sleep(1.5)
        return strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)

    return program


def test_communication_options_timeout_seconds_bounds_a_cross_worker_call():
    start = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="CommunicationOptions.timeout_seconds"):
        launch(_straggler(0.3), workers=2, devices_per_worker=1)
    assert time.monotonic() - start < 1.4  # the 0.3 s deadline, not the straggler's 1.5 s


def test_without_timeout_seconds_the_straggler_is_only_slow():
    assert [float(r) for r in launch(_straggler(None), workers=2, devices_per_worker=1)] == [
        2.0
    ] * 2


def test_simdist_worker_timeout_bounds_the_virtual_cluster(simdist_env):
    simdist_env("SIMDIST_WORKER_TIMEOUT", "0.3")
    with pytest.raises(errors.DeadlineExceededError, match="SIMDIST_WORKER_TIMEOUT"):
        launch(_straggler(None), workers=2, devices_per_worker=1)


def test_an_error_names_the_global_replica_its_worker_and_task():
    def program():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()

        def step():
            if tf.distribute.get_replica_context().replica_id_in_sync_group == 3:
                raise ValueError("bad batch")
            return tf.constant(1.0)

        return strategy.run(step)

    cluster = {"chief": ["c:1"], "worker": ["w:1"]}
    with pytest.raises(ValueError, match="bad batch") as info:
        launch(program, cluster=cluster, devices_per_worker=2)
    notes = info.value.__notes__
    assert info.value.replica_id_in_sync_group == 3
    assert (
        "(raised on replica_id_in_sync_group 3 of 4: local replica 1 of worker 1 (worker:0)"
        in notes[0]
    )
    assert not any(n.startswith("(raised on replica 1 of 2") for n in notes)  # not the local id


def _imports(module: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_the_worker_context_and_the_mpi_readers_sit_below_the_transports():
    root = pathlib.Path(tf.__file__).parent
    for path in (
        "distribute/worker_context.py",
        "distribute/mpi_env.py",
        "distribute/virtual_devices.py",
        "distribute/cluster_resolver/mpi.py",
    ):
        upward = {m for m in _imports(root / path) if m.startswith("simdist.backends")}
        assert not upward, f"{path} imports {upward} (a layer above it)"
