"""Mirrored and sync-on-read variables: TF's read/write rules, and simdist's loud NONE rule."""

import numpy as np
import pytest

import simdist as tf
from simdist.distribute.distributed_variables import MirroredVariable, SyncOnReadVariable
from simdist.distribute.values import PerReplica

AGG = tf.VariableAggregation
SYNC = tf.VariableSynchronization


@pytest.fixture
def strategy():
    return tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])


def per_replica(*values):
    return PerReplica([tf.constant(v) for v in values])


def test_scope_makes_mirrored_variables_with_tf_repr(strategy):
    with strategy.scope():
        v = tf.Variable(1.0)
    assert isinstance(v, MirroredVariable) and isinstance(v, tf.Variable)
    assert repr(v) == (
        "MirroredVariable:{\n"
        "  0: <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>,\n"
        "  1: <tf.Variable 'Variable/replica_1:0' shape=() dtype=float32, numpy=1.0>\n"
        "}"
    )
    assert [c.device for c in v.values] == list(strategy.extended.worker_devices)


def test_unseeded_initializer_gives_every_copy_the_same_value(strategy):
    with strategy.scope():
        v = tf.Variable(lambda: tf.random.normal([3]))
    np.testing.assert_array_equal(v.values[0].numpy(), v.values[1].numpy())


@pytest.mark.parametrize(
    "aggregation, op, expected",
    [
        (AGG.SUM, "assign", 3.0),
        (AGG.MEAN, "assign", 1.5),
        (AGG.ONLY_FIRST_REPLICA, "assign", 1.0),
        (AGG.SUM, "assign_add", 13.0),  # 10 + (1 + 2)
        (AGG.MEAN, "assign_add", 11.5),
        (AGG.ONLY_FIRST_REPLICA, "assign_sub", 9.0),
    ],
)
def test_replica_context_writes_follow_aggregation(strategy, aggregation, op, expected):
    with strategy.scope():
        v = tf.Variable(10.0, aggregation=aggregation)
    strategy.run(lambda x: getattr(v, op)(x), args=(per_replica(1.0, 2.0),))
    assert [float(c.numpy()) for c in v.values] == [expected, expected]


def test_aggregation_none_with_equal_values_is_fine_and_different_values_are_loud(strategy):
    with strategy.scope():
        v = tf.Variable(0.0)
    strategy.run(lambda: v.assign(5.0))
    assert [float(c.numpy()) for c in v.values] == [5.0, 5.0]
    with pytest.raises(ValueError, match="aggregation is NONE"):
        strategy.run(lambda x: v.assign(x), args=(per_replica(1.0, 2.0),))


def test_cross_replica_assign_writes_every_copy(strategy):
    with strategy.scope():
        v = tf.Variable([1.0, 2.0])
    v.assign([3.0, 4.0])
    for c in v.values:
        np.testing.assert_array_equal(c.numpy(), [3.0, 4.0])


def test_replica_reads_its_own_copy_and_gradients_reach_it(strategy):
    with strategy.scope():
        v = tf.Variable(2.0)

    def fn(x):
        with tf.GradientTape() as tape:
            y = v * x
        return tape.gradient(y, v), y.device

    grads, devices = strategy.run(fn, args=(per_replica(3.0, 4.0),))
    assert [float(g) for g in grads.values] == [3.0, 4.0]
    assert devices.values == tuple(strategy.extended.worker_devices)


def test_sync_on_read_is_local_in_replicas_and_aggregated_outside(strategy):
    with strategy.scope():
        total = tf.Variable(0.0, synchronization=SYNC.ON_READ, aggregation=AGG.SUM)
        mean = tf.Variable(0.0, synchronization=SYNC.ON_READ, aggregation=AGG.MEAN)
    assert isinstance(total, SyncOnReadVariable) and not total.trainable

    def fn(x):
        total.assign_add(x)
        mean.assign(x)
        return total.read_value()

    local = strategy.run(fn, args=(per_replica(1.0, 2.0),))
    assert [float(x) for x in local.values] == [1.0, 2.0]
    assert float(total.read_value()) == 3.0 and float(mean.read_value()) == 1.5


def test_sync_on_read_cross_replica_assign_splits_a_sum(strategy):
    with strategy.scope():
        total = tf.Variable(0.0, synchronization=SYNC.ON_READ, aggregation=AGG.SUM)
    total.assign(6.0)
    assert [float(c.numpy()) for c in total.values] == [3.0, 3.0]
    assert float(total.numpy()) == 6.0
    with pytest.raises(ValueError, match="does not support `assign_add` in cross-replica"):
        total.assign_add(1.0)


def test_sync_on_read_with_aggregation_none_cannot_be_read_across_replicas(strategy):
    with strategy.scope():
        v = tf.Variable(0.0, synchronization=SYNC.ON_READ, aggregation=AGG.NONE)
    with pytest.raises(ValueError, match="NONE"):
        v.read_value()


def test_synchronization_none_is_refused(strategy):
    with strategy.scope(), pytest.raises(ValueError, match="`NONE` variable synchronization"):
        tf.Variable(1.0, synchronization=SYNC.NONE)


def test_variable_created_inside_run_is_created_once_and_shared(strategy):
    holder = []

    def fn():
        if not holder or len(holder) < 2:
            holder.append(tf.Variable(1.0))
        return holder[-1]

    out = strategy.run(fn)
    assert holder[0] is holder[1] and isinstance(out, MirroredVariable)


def test_mixing_strategies_is_refused(strategy):
    other = tf.distribute.MirroredStrategy(["GPU:2", "GPU:3"])
    with strategy.scope(), pytest.raises(ValueError, match="Mixing different"):
        with other.scope():
            pass
