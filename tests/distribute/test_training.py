"""The custom training loop under MirroredStrategy: N replicas x B/N == 1 replica x B."""

import numpy as np
import pytest

import simdist as tf
from simdist.distribute.values import PerReplica

GLOBAL_BATCH = 16


def create_model():
    return tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(4, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(10),
        ]
    )


def split(array, n):
    if n == 1:
        return tf.constant(array)
    per = len(array) // n
    return PerReplica([tf.constant(array[i * per : (i + 1) * per]) for i in range(n)])


def train(num_replicas, steps=3, loss_rule="global"):
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    images = rng.random((steps, GLOBAL_BATCH, 10, 10, 1), dtype=np.float32)
    labels = rng.integers(0, 10, (steps, GLOBAL_BATCH)).astype(np.int64)
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(num_replicas)])
    with strategy.scope():
        model = create_model()
        model.build((None, 10, 10, 1))
        optimizer = tf.keras.optimizers.Adam()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            predictions = model(x, training=True)
            per_example = loss_object(y, predictions)
            if loss_rule == "global":
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
            else:  # the pitfall the tutorial warns about: mean over the replica's batch
                loss = tf.reduce_mean(per_example)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        accuracy.update_state(y, predictions)
        return loss

    @tf.function
    def distributed_train_step(x, y):
        per_replica_losses = strategy.run(train_step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    losses = [
        float(
            distributed_train_step(split(images[s], num_replicas), split(labels[s], num_replicas))
        )
        for s in range(steps)
    ]
    weights = [w.values[0].numpy() if hasattr(w, "values") else w.numpy() for w in model.weights]
    return losses, weights, float(accuracy.result()), model, optimizer


@pytest.mark.parametrize("num_replicas", [2, 4])
def test_n_replicas_match_one_replica_on_the_global_batch(num_replicas):
    one_losses, one_weights, one_acc, _, _ = train(1)
    losses, weights, acc, model, _ = train(num_replicas)
    np.testing.assert_allclose(losses, one_losses, rtol=1e-5)
    for a, b in zip(weights, one_weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert acc == one_acc
    for w in model.weights:  # every copy identical, bit for bit
        for component in w.values[1:]:
            np.testing.assert_array_equal(component.numpy(), w.values[0].numpy())


def test_reduce_mean_per_replica_scales_the_loss_by_the_replica_count():
    one_losses, *_ = train(1, steps=1, loss_rule="replica_mean")
    four_losses, *_ = train(4, steps=1, loss_rule="replica_mean")
    assert four_losses[0] == pytest.approx(4 * one_losses[0], rel=1e-5)


@pytest.mark.strategies(exclude=("default",))  # the default strategy has no scope to leave
def test_optimizer_refuses_variables_created_outside_the_scope(distribution):
    strategy = distribution
    outside = tf.Variable(1.0)
    with strategy.scope():
        optimizer = tf.keras.optimizers.SGD()

    def step():
        optimizer.apply_gradients([(tf.constant(1.0), outside)])

    with pytest.raises(ValueError, match="not created under that strategy's scope"):
        strategy.run(step)


def test_model_built_lazily_inside_run_gets_one_set_of_mirrored_weights():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
    x = PerReplica([tf.ones([2, 4]), tf.ones([2, 4])])
    strategy.run(lambda x: model(x), args=(x,))
    assert len(model.trainable_variables) == 2
    for v in model.trainable_variables:
        assert type(v).__name__ == "MirroredVariable"
        assert all(type(c) is tf.Variable for c in v.values)


def test_run_inside_the_scope_does_not_mirror_twice():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        v = strategy.run(lambda: tf.Variable(1.0))
        w = tf.Variable(2.0)
    for var in (v, w):
        assert all(type(c) is tf.Variable for c in var.values)


def test_distribute_datasets_from_function_feeds_each_replica_its_own_batches():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    contexts = []

    def dataset_fn(input_context):
        contexts.append(input_context)
        batch_size = input_context.get_per_replica_batch_size(8)
        dataset = tf.data.Dataset.range(16).batch(batch_size)
        return dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)

    dist = strategy.distribute_datasets_from_function(dataset_fn)
    steps = [[t.numpy().tolist() for t in x.values] for x in dist]
    assert (contexts[0].num_input_pipelines, contexts[0].input_pipeline_id) == (1, 0)
    assert contexts[0].num_replicas_in_sync == 2
    assert steps == [[[0, 1, 2, 3], [4, 5, 6, 7]], [[8, 9, 10, 11], [12, 13, 14, 15]]]


def test_iterating_the_distributed_dataset_inside_a_function():
    # The tutorial's `distributed_train_epoch`: the loop over the dataset inside tf.function.
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.range(10).batch(4))

    @tf.function
    def epoch(dataset):
        total = 0
        num_batches = 0
        for x in dataset:
            per_replica = strategy.run(lambda v: tf.reduce_sum(v), args=(x,))
            total += strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
            num_batches += 1
        return total / tf.cast(num_batches, dtype=tf.int64)

    assert float(epoch(dist)) == 45 / 3
