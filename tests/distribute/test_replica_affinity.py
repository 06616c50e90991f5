"""Opt-in: replica threads of one run share one CPU (Linux); results never depend on it."""

from __future__ import annotations

import os

import numpy as np
import pytest

import simdist as tf
from simdist.distribute import replica_affinity

linux_multi_cpu = pytest.mark.skipif(
    not replica_affinity._SUPPORTED or len(replica_affinity._PROCESS_CPUS) < 2,
    reason="thread CPU affinity needs Linux (sched_setaffinity) and at least two CPUs",
)


def _cpus_seen(strategy) -> list[frozenset[int]]:
    def fn():
        ctx = tf.distribute.get_replica_context()
        ctx.all_reduce("sum", tf.constant(1.0))  # the turn passes between the replicas
        return tf.constant(sorted(os.sched_getaffinity(0)))

    result = strategy.run(fn)
    return [frozenset(t.numpy().tolist()) for t in strategy.experimental_local_results(result)]


@linux_multi_cpu
def test_all_replicas_of_a_run_share_one_cpu_of_the_process(simdist_env):
    simdist_env("SIMDIST_PIN_REPLICA_THREADS", "1")
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(4)])
    seen = _cpus_seen(strategy)
    assert len(set(seen)) == 1
    (cpus,) = set(seen)
    assert len(cpus) == 1 and cpus <= replica_affinity._PROCESS_CPUS


@linux_multi_cpu
def test_switched_off_the_replicas_get_every_cpu(simdist_env):
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(4)])
    simdist_env("SIMDIST_PIN_REPLICA_THREADS", "1")
    _cpus_seen(strategy)  # pooled threads pinned by an earlier run are released again
    simdist_env("SIMDIST_PIN_REPLICA_THREADS", "0")
    assert set(_cpus_seen(strategy)) == {replica_affinity._PROCESS_CPUS}


@linux_multi_cpu
def test_off_by_default(simdist_env):
    simdist_env("SIMDIST_PIN_REPLICA_THREADS", "1")
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(2)])
    _cpus_seen(strategy)
    simdist_env("SIMDIST_PIN_REPLICA_THREADS", None)
    assert replica_affinity.run_cpu() is None
    assert set(_cpus_seen(strategy)) == {replica_affinity._PROCESS_CPUS}


def test_a_bad_switch_value_is_named(simdist_env):
    with pytest.raises(ValueError, match="SIMDIST_PIN_REPLICA_THREADS='yes' must be 0 or 1"):
        simdist_env("SIMDIST_PIN_REPLICA_THREADS", "yes")


def test_results_are_the_same_bits_pinned_or_not(simdist_env):
    def train(pin: str) -> list[np.ndarray]:
        simdist_env("SIMDIST_PIN_REPLICA_THREADS", pin)
        tf.random.set_seed(3)
        strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
        with strategy.scope():
            layers = [tf.keras.layers.Dense(8, "relu"), tf.keras.layers.Dense(2)]
            model = tf.keras.Sequential(layers)
            model.compile(optimizer="adam", loss="mse")
        x = np.random.default_rng(0).standard_normal((32, 4)).astype(np.float32)
        model.fit(x, x[:, :2], batch_size=8, epochs=2, verbose=0)
        return model.get_weights()

    for pinned, free in zip(train("1"), train("0"), strict=True):
        assert pinned.tobytes() == free.tobytes()
