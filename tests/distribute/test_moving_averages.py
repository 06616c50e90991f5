"""``tf.train.ExponentialMovingAverage`` on simdist's own (checked against TF 2.21 in the
``train.exponential_moving_average`` snippet)."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf


def test_the_shadow_follows_the_rule_with_the_num_updates_decay():
    step = tf.Variable(0, dtype=tf.int64)
    w = tf.Variable([0.0, 4.0])
    ema = tf.train.ExponentialMovingAverage(0.999, num_updates=step)
    ema.apply([w])
    shadow, expected = ema.average(w), np.array([0.0, 4.0], np.float32)
    for n, value in enumerate([[1.0, 1.0], [2.0, -2.0], [8.0, 0.5]], start=1):
        w.assign(value)
        step.assign(n)
        decay = min(0.999, (1 + n) / (10 + n))
        expected = expected - (expected - np.float32(value)) * np.float32(1 - decay)
        ema.apply([w])
        np.testing.assert_allclose(shadow.numpy(), expected, rtol=1e-6)
    assert not shadow.trainable and shadow.name == "Variable/ExponentialMovingAverage:0"


def test_a_mirrored_variables_shadow_is_mirrored_and_updated_from_cross_replica_too():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        m = tf.Variable([2.0, 2.0])
    ema = tf.train.ExponentialMovingAverage(0.5)
    strategy.run(lambda: ema.apply([m]))
    m.assign([4.0, 0.0])
    ema.apply([m])  # cross-replica: each copy from its variable's copy
    copies = [c.numpy().tolist() for c in strategy.experimental_local_results(ema.average(m))]
    assert type(ema.average(m)).__name__ == "MirroredVariable"
    assert copies == [[3.0, 1.0], [3.0, 1.0]]


def test_bad_var_lists_are_refused():
    ema = tf.train.ExponentialMovingAverage(0.9)
    with pytest.raises(ValueError, match="needs var_list"):
        ema.apply()
    with pytest.raises(TypeError, match="half, float, or double"):
        ema.apply([tf.Variable(1)])
    with pytest.raises(NotImplementedError, match="average a tf.Variable"):
        ema.apply([tf.constant(1.0)])
