"""Small behaviours where simdist follows TF 2.21 exactly (held without TensorFlow here; the
differential harness, tests/differential/, compares the same against real TF)."""

import pytest

import simdist as tf


def test_default_and_one_device_reduce_return_plain_values_unchanged():
    assert tf.distribute.get_strategy().reduce("SUM", 1.0, axis=None) == 1.0
    assert type(tf.distribute.get_strategy().reduce("SUM", 1.0, axis=None)) is float
    one = tf.distribute.OneDeviceStrategy("CPU:0")
    assert type(one.reduce("MEAN", 2.5, axis=None)) is float
    # an axis still reduces along it
    assert float(tf.distribute.get_strategy().reduce("SUM", tf.constant([1.0, 2.0]), axis=0)) == 3.0


def test_gather_of_a_plain_tensor_returns_it_unchanged():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    x = tf.constant([1.0, 2.0])
    assert strategy.gather(x, axis=0) is x
    per_replica = strategy.run(lambda: tf.constant([1.0]))
    assert strategy.gather(per_replica, axis=0).numpy().tolist() == [1.0, 1.0]


def test_default_strategy_has_no_device_lists_as_in_tf():
    extended = tf.distribute.get_strategy().extended
    with pytest.raises(RuntimeError, match="worker_devices\\(\\) method unsupported"):
        _ = extended.worker_devices
    with pytest.raises(RuntimeError, match="parameter_devices\\(\\) method unsupported"):
        _ = extended.parameter_devices
    assert type(tf.distribute.get_replica_context()).__name__ == "_DefaultReplicaContext"


def test_variable_classes_and_synchronization_follow_tf():
    v = tf.Variable(1.0)
    assert type(v).__name__ == "ResourceVariable" and isinstance(v, tf.Variable)
    assert v.synchronization is tf.VariableSynchronization.AUTO
    assert repr(tf.VariableAggregation.SUM) == "<VariableAggregationV2.SUM: 1>"
    with tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"]).scope():
        mirrored = tf.Variable(1.0)
    assert mirrored.synchronization is tf.VariableSynchronization.ON_WRITE
    assert all(c.synchronization is tf.VariableSynchronization.ON_WRITE for c in mirrored.values)
    assert [type(c).__name__ for c in mirrored.values] == ["ResourceVariable"] * 2
