"""The distributed-training guide's examples (distributed_training_guide seed), verbatim.

The guide's printed losses depend on TF's random initial weights, which simdist does not
reproduce bit for bit; what the test holds is the shape of the output: one scalar float32
loss per step, falling steadily, as the guide prints (1.1195339, 1.11048, 1.1015058, ...).
"""

import re

import numpy as np

import simdist as tf


def test_custom_training_loop_from_the_guide():
    mirrored_strategy = tf.distribute.MirroredStrategy()
    assert mirrored_strategy.extended.worker_devices == tuple(
        f"/job:localhost/replica:0/task:0/device:GPU:{i}" for i in range(4)
    )
    global_batch_size = 10 * mirrored_strategy.num_replicas_in_sync

    with mirrored_strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
        optimizer = tf.keras.optimizers.SGD()

    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(1000).batch(global_batch_size)
    dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)

    loss_object = tf.keras.losses.BinaryCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )

    def compute_loss(labels, predictions):
        per_example_loss = loss_object(labels, predictions)
        return tf.nn.compute_average_loss(per_example_loss, global_batch_size=global_batch_size)

    def train_step(inputs):
        features, labels = inputs

        with tf.GradientTape() as tape:
            predictions = model(features, training=True)
            loss = compute_loss(labels, predictions)

        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))  # noqa: B905
        return loss

    @tf.function
    def distributed_train_step(dist_inputs):
        per_replica_losses = mirrored_strategy.run(train_step, args=(dist_inputs,))
        return mirrored_strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    printed = [str(distributed_train_step(dist_inputs)) for dist_inputs in dist_dataset]
    assert len(printed) == 1000 // global_batch_size
    assert all(
        re.fullmatch(r"tf\.Tensor\([0-9.]+, shape=\(\), dtype=float32\)", p) for p in printed
    )
    losses = np.array([float(p[10:].split(",")[0]) for p in printed])
    assert np.all(np.diff(losses) < 0)  # every step lowers the loss, as in the guide


def test_the_iterator_variant_from_the_guide():
    mirrored_strategy = tf.distribute.MirroredStrategy()
    with mirrored_strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(100).batch(8)
    iterator = iter(mirrored_strategy.experimental_distribute_dataset(dataset))
    features, labels = next(iterator)
    assert [t.shape for t in features.values] == [(2, 1)] * 4
    outputs = mirrored_strategy.run(lambda x: model(x), args=(features,))
    assert [o.device for o in outputs.values] == list(mirrored_strategy.extended.worker_devices)
