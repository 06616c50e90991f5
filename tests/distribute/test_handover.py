"""The hand-over of the turn: the woken thread starts on the waker's CPU, then runs anywhere."""

from __future__ import annotations

import os
import threading
import time
import warnings

import numpy as np
import pytest

import simdist as tf
from simdist import settings
from simdist.distribute import handover
from simdist.distribute.runner import _Signal

_CPUS = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()
linux_multi_cpu = pytest.mark.skipif(
    not handover.supported() or len(_CPUS) < 2,
    reason="placing a wake-up needs Linux (sched_getcpu, sched_setaffinity) and two CPUs",
)


@linux_multi_cpu
def test_the_sleeper_is_moved_to_the_wakers_cpu_and_gets_its_cpus_back_when_it_wakes():
    signal = _Signal()
    seen = {}

    def sleeper():
        signal.waiter = handover.Sleeper()
        ready.set()
        signal.wait()
        seen["after"] = frozenset(os.sched_getaffinity(0))

    ready = threading.Event()
    thread = threading.Thread(target=sleeper)
    thread.start()
    ready.wait()
    signal.waiter.move_here()  # what post() does first
    moved_to = frozenset(os.sched_getaffinity(thread.native_id))
    here = handover._getcpu()
    signal.post()
    thread.join()
    assert len(moved_to) == 1 and moved_to <= _CPUS
    assert here in moved_to or len(os.sched_getaffinity(0)) == 1  # the waker may have moved
    assert seen["after"] == _CPUS


@linux_multi_cpu
def test_with_any_nothing_is_moved():
    with settings.override(replica_handover="any"):
        sleeper = handover.Sleeper()
        sleeper.move_here()
        assert not sleeper.moved
    assert frozenset(os.sched_getaffinity(0)) == _CPUS


def _cpus_seen(strategy) -> list[frozenset[int]]:
    def fn():
        ctx = tf.distribute.get_replica_context()
        ctx.all_reduce("sum", tf.constant(1.0))  # the turn passes between the replicas
        return tf.constant(sorted(os.sched_getaffinity(0)))

    result = strategy.run(fn)
    return [frozenset(t.numpy().tolist()) for t in strategy.experimental_local_results(result)]


@linux_multi_cpu
@pytest.mark.parametrize("handover_mode", ["same-cpu", "any"])
def test_no_thread_is_held_on_one_cpu_while_it_runs(handover_mode):
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(4)])
    with settings.override(replica_handover=handover_mode):
        seen = _cpus_seen(strategy)
    assert set(seen) == {_CPUS}  # every replica, in its turn, may run on every CPU
    assert frozenset(os.sched_getaffinity(0)) == _CPUS  # and so may the caller after the run


@linux_multi_cpu
def test_the_caller_keeps_a_mask_of_its_own_choosing():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    saved = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(_CPUS)})
        strategy.run(lambda: tf.distribute.get_replica_context().all_reduce("sum", 1.0))
        assert os.sched_getaffinity(0) == {min(_CPUS)}
    finally:
        os.sched_setaffinity(0, saved)


@linux_multi_cpu
def test_a_replica_that_outlives_its_run_leaves_the_callers_cpus_alone(simdist_env):
    # A replica stuck past the deadline hands the turn back when it finally returns; the
    # run is over by then, and the caller's thread must not be restricted to its CPU.
    simdist_env("SIMDIST_REPLICA_TIMEOUT", "0.3")
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    release, finished = threading.Event(), threading.Event()

    def fn():
        if int(tf.distribute.get_replica_context().replica_id_in_sync_group) == 1:
            release.wait(30)
            finished.set()
        return 0

    with pytest.raises(tf.errors.DeadlineExceededError):
        strategy.run(fn)
    release.set()
    assert finished.wait(10)
    for _ in range(50):  # the late hand-over comes just after the body returns
        time.sleep(0.01)
        assert frozenset(os.sched_getaffinity(0)) == _CPUS


def test_a_bad_value_is_named():
    with pytest.raises(ValueError, match="SIMDIST_REPLICA_HANDOVER='next' must be 'same-cpu'"):
        settings.Settings.from_environ({"SIMDIST_REPLICA_HANDOVER": "next"})


def test_the_retired_pinning_variable_warns_and_says_what_replaced_it():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settings.Settings.from_environ({"SIMDIST_PIN_REPLICA_THREADS": "1"})
    assert any("SIMDIST_REPLICA_HANDOVER" in str(w.message) for w in caught)


def test_results_are_the_same_bits_whatever_the_handover():
    def train(mode: str) -> list[np.ndarray]:
        with settings.override(replica_handover=mode):
            tf.random.set_seed(3)
            strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
            with strategy.scope():
                layers = [tf.keras.layers.Dense(8, "relu"), tf.keras.layers.Dense(2)]
                model = tf.keras.Sequential(layers)
                model.compile(optimizer="adam", loss="mse")
            x = np.random.default_rng(0).standard_normal((32, 4)).astype(np.float32)
            model.fit(x, x[:, :2], batch_size=8, epochs=2, verbose=0)
            return model.get_weights()

    for same, anywhere in zip(train("same-cpu"), train("any"), strict=True):
        assert same.tobytes() == anywhere.tobytes()
