"""BatchNormalization and SyncBatchNormalization under MirroredStrategy.

* BatchNormalization's moving statistics are ON_READ / MEAN variables: each replica moves its
  own copy with its own batch; reading outside the replicas gives the mean of the copies.
* SyncBatchNormalization all-reduces the batch statistics: N replicas x B/N equals
  1 replica x B (outputs, moving statistics, gradients), and both equal the plain statement
  of the rule in ``reference/batch_norm.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist.core.variables import VariableAggregation, VariableSynchronization

L = tf.keras.layers


def _strategy(n: int):
    return tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(n)])


def _per_replica(strategy, batch: np.ndarray):
    n = strategy.num_replicas_in_sync
    parts = np.split(batch, n)
    return strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(parts[ctx.replica_id_in_sync_group])
    )


def _train_step(strategy, layer, batch):
    """One training call per replica; returns outputs (concatenated) and gamma's gradient."""
    values = _per_replica(strategy, batch)

    def step(x):
        with tf.GradientTape() as tape:
            y = layer(x, training=True)
            loss = tf.reduce_sum(y * y * 0.5 + y)
        return y, tape.gradient(loss, layer.gamma)

    outputs, grads = strategy.run(step, args=(values,))
    parts = strategy.experimental_local_results(outputs)
    grad = strategy.reduce("SUM", grads, axis=None)
    return np.concatenate([np.asarray(p) for p in parts]), np.asarray(grad)


def test_moving_statistics_are_on_read_mean_variables():
    strategy = _strategy(2)
    with strategy.scope():
        layer = L.BatchNormalization(momentum=0.5)
        layer.build((None, 3))
    for variable in (layer.moving_mean, layer.moving_variance):
        assert variable.synchronization is VariableSynchronization.ON_READ
        assert variable.aggregation is VariableAggregation.MEAN
        assert not variable.trainable
    assert [w.name for w in layer.trainable_weights] == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
    ]


def test_each_replica_moves_its_own_copy_and_a_read_averages_them():
    strategy = _strategy(2)
    with strategy.scope():
        layer = L.BatchNormalization(momentum=0.5)
        layer.build((None, 2))
    batch = np.array([[1.0, 2.0], [3.0, 6.0], [10.0, 0.0], [30.0, 4.0]], np.float32)
    _train_step(strategy, layer, batch)
    copies = [np.asarray(v) for v in layer.moving_mean.values]
    np.testing.assert_allclose(copies[0], 0.5 * batch[:2].mean(0), rtol=1e-6)
    np.testing.assert_allclose(copies[1], 0.5 * batch[2:].mean(0), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(layer.moving_mean), (copies[0] + copies[1]) / 2, rtol=1e-6
    )
    np.testing.assert_allclose(layer.get_weights()[2], (copies[0] + copies[1]) / 2, rtol=1e-6)


@settings(max_examples=12, deadline=None)
@given(
    replicas=st.sampled_from([2, 4]),
    per_replica=st.integers(1, 3),
    channels=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    image=st.booleans(),
)
def test_sync_batch_norm_n_replicas_equal_one(replicas, per_replica, channels, seed, image):
    rng = np.random.default_rng(seed)
    shape = (
        (replicas * per_replica, 2, 2, channels) if image else (replicas * per_replica, channels)
    )
    batch = rng.standard_normal(shape) * 3 + 1
    gamma = rng.uniform(0.5, 2.0, channels)
    beta = rng.standard_normal(channels)
    results = {}
    for n in (replicas, 1):
        strategy = _strategy(n)
        with strategy.scope():
            layer = L.experimental.SyncBatchNormalization(momentum=0.8, dtype="float64")
            layer.build((None, *shape[1:]))
        layer.gamma.assign(gamma)
        layer.beta.assign(beta)
        out, grad = _train_step(strategy, layer, batch)
        results[n] = (out, grad, np.asarray(layer.moving_mean), np.asarray(layer.moving_variance))
    outputs, new_mean, new_var = ref.sync_batch_norm(
        np.split(batch, replicas),
        gamma,
        beta,
        np.zeros(channels),
        np.ones(channels),
        momentum=0.8,
        epsilon=1e-3,
    )
    many, one = results[replicas], results[1]
    for a, b in zip(many, one, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(many[0], np.concatenate(outputs), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(many[2], new_mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(many[3], new_var, rtol=1e-9, atol=1e-12)
    copies = [np.asarray(v) for v in tf.nest.flatten(layer.moving_mean.values)]
    assert all(np.array_equal(c, copies[0]) for c in copies)


def test_plain_batch_norm_differs_from_sync_across_replicas():
    """The property above can fail: per-replica statistics do not equal the global ones."""
    batch = np.array([[0.0], [2.0], [10.0], [14.0]])
    outs = {}
    for cls in (L.BatchNormalization, L.experimental.SyncBatchNormalization):
        strategy = _strategy(2)
        with strategy.scope():
            layer = cls(dtype="float64")
            layer.build((None, 1))
        outs[cls.__name__] = _train_step(strategy, layer, batch)[0]
    assert not np.allclose(outs["BatchNormalization"], outs["SyncBatchNormalization"])
    mean, var = ref.sync_batch_statistics(np.split(batch, 2))
    np.testing.assert_allclose(
        outs["SyncBatchNormalization"], (batch - mean) / np.sqrt(var + 1e-3), rtol=1e-12
    )


def test_sync_batch_norm_outside_replicas_is_batch_norm():
    x = np.random.default_rng(0).standard_normal((6, 3))
    a = L.BatchNormalization(dtype="float64")
    b = L.experimental.SyncBatchNormalization(dtype="float64")
    np.testing.assert_array_equal(np.asarray(a(x, training=True)), np.asarray(b(x, training=True)))


@pytest.mark.parametrize(
    ("bad", "kwargs"),
    [
        ("renorm", {"renorm": True}),
        ("virtual_batch_size", {"virtual_batch_size": 2}),
        ("adjustment", {"adjustment": lambda shape: (1.0, 0.0)}),  # was silently ignored
    ],
)
def test_unsupported_options_raise(bad, kwargs):
    with pytest.raises(NotImplementedError, match=bad):
        L.BatchNormalization(**kwargs)
