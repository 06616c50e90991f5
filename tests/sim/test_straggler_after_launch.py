"""A worker stuck past the cluster's deadline runs no further step once it wakes."""

from __future__ import annotations

import threading

import pytest

import simdist as tf
from simdist import errors
from simdist.core import step_hooks
from simdist.distribute.faults import FaultPlan
from simdist.sim import launch


class _Listener(step_hooks.Listener):
    """A listener that records the strategy.run calls that start."""

    def __init__(self) -> None:
        self.started = []

    def run_starting(self, strategy) -> None:
        self.started.append(type(strategy).__name__)


def test_a_straggler_that_wakes_after_the_deadline_runs_no_more_steps():
    straggler_done = threading.Event()

    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        me = strategy.cluster_resolver.task_id  # read while the worker's TF_CONFIG is set
        try:
            strategy.run(lambda: tf.constant(1.0))  # worker 1 sleeps 0.5 s before it
            strategy.run(lambda: tf.constant(2.0))
        finally:
            if me == 1:
                straggler_done.set()

    plan = FaultPlan().slow_worker(1, seconds=0.5)
    with pytest.raises(errors.DeadlineExceededError, match="Worker 1 neither reached"):
        launch(prog, workers=2, devices_per_worker=1, faults=plan, timeout=0.1)
    listener = _Listener()
    step_hooks.set_listener(listener)  # what runs in the process now (a replay, a check)
    try:
        assert straggler_done.wait(timeout=10)
    finally:
        step_hooks.set_listener(None)
    assert listener.started == []  # the woken straggler started no strategy.run
