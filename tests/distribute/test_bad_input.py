"""Bad input to the strategy API: TF's exception types, with messages that say what to do."""

import numpy as np
import pytest

import simdist as tf
from simdist.distribute.values import PerReplica


@pytest.fixture
def strategy():
    return tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])


def test_unknown_reduce_op(distribution):
    strategy = distribution
    value = strategy.run(lambda: tf.constant(1.0))
    with pytest.raises(ValueError, match="ReduceOp.SUM or tf.distribute.ReduceOp.MEAN"):
        strategy.reduce("MAX", value, axis=None)


def test_reduce_axis_out_of_range(distribution):
    strategy = distribution
    value = strategy.run(lambda: tf.constant([1.0]))
    with pytest.raises(ValueError, match="out of range for `value` with rank 1"):
        strategy.reduce("SUM", value, axis=1)


def test_sum_of_a_plain_tensor_over_several_replicas_is_refused(strategy):
    with pytest.raises(ValueError, match="cannot be reduced with SUM"):
        strategy.reduce("SUM", tf.constant(3), axis=None)
    assert int(strategy.reduce("MEAN", tf.constant(3), axis=None)) == 3


def test_per_replica_args_with_the_wrong_replica_count(strategy):
    three = PerReplica([tf.constant(1), tf.constant(2), tf.constant(3)])
    with pytest.raises(ValueError, match="3 components, but the strategy has 2 replicas"):
        strategy.run(lambda x: x, args=(three,))


def test_replicas_returning_different_structures(strategy):
    def fn():
        if int(tf.distribute.get_replica_context().replica_id_in_sync_group) == 0:
            return tf.constant(1)
        return (tf.constant(1), tf.constant(2))

    with pytest.raises(ValueError, match="returned different structures"):
        strategy.run(fn)


def test_gather_of_scalars_and_of_mismatched_shapes(strategy):
    scalars = strategy.run(lambda: tf.constant(1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="tf.expand_dims"):
        strategy.gather(scalars, axis=0)
    parts = [tf.zeros([1, 2, 3]), tf.zeros([1, 3, 3])]
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: parts[ctx.replica_id_in_sync_group]
    )
    assert strategy.gather(values, axis=1).shape == (1, 5, 3)  # the API page's allowed case
    for axis in (0, 2):
        with pytest.raises(tf.errors.InvalidArgumentError, match="except along axis"):
            strategy.gather(values, axis=axis)


def test_reduce_and_gather_refused_inside_a_replica_function(strategy):
    with pytest.raises(RuntimeError, match="cross-replica context"):
        strategy.run(lambda: strategy.reduce("SUM", tf.constant(1.0), axis=None))


def test_unknown_and_duplicate_devices():
    with pytest.raises(ValueError, match="does not exist: this simulated host has 4 GPU"):
        tf.distribute.MirroredStrategy(["GPU:0", "GPU:7"])
    with pytest.raises(ValueError, match="No duplicates"):
        tf.distribute.MirroredStrategy(["GPU:0", "/gpu:0"])
    with pytest.raises(TypeError, match="list of device names"):
        tf.distribute.MirroredStrategy("GPU:0")


def test_unbatched_dataset_is_refused_with_the_fix(strategy):
    with pytest.raises(ValueError, match="batch"):
        iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(8)))


def test_per_replica_batch_size_must_divide():
    ctx = tf.distribute.InputContext(
        num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=4
    )
    assert ctx.get_per_replica_batch_size(8) == 2
    with pytest.raises(ValueError, match="not divisible"):
        ctx.get_per_replica_batch_size(10)


def test_keras_loss_with_auto_reduction_inside_run_is_refused(strategy):
    with strategy.scope():
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with pytest.raises(ValueError, match="Reduction.SUM` or `tf.keras.losses.Reduction.NONE"):
        strategy.run(lambda: loss_object(tf.constant([1]), tf.constant([[0.0, 1.0]])))


def test_variable_from_another_strategy_cannot_be_updated(strategy):
    other = tf.distribute.MirroredStrategy(["GPU:2", "GPU:3"])
    with other.scope():
        foreign = tf.Variable(np.zeros(2, np.float32))
    with strategy.scope():
        optimizer = tf.keras.optimizers.SGD()
    with pytest.raises(ValueError, match="not created under that strategy's scope"):
        strategy.run(lambda: optimizer.apply_gradients([(tf.ones([2]), foreign)]))
