"""Same program, same bits: whatever the thread switching, intra-op threads or replicas' turns."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import simdist as tf
from simdist.core import intra_op
from simdist.demo import create_model


def _train(replicas: int) -> list[bytes]:
    """Three steps of the tutorial's Fashion-MNIST CNN (32 images per replica: several
    intra-op blocks)."""
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    batch = 32 * replicas
    images = rng.random((3 * batch, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, 3 * batch)
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])
    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="none"
        )

    def step(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            per_example = loss_object(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))

    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch)
    for inputs in strategy.experimental_distribute_dataset(dataset):
        strategy.run(step, args=(inputs,))
    return [w.tobytes() for w in model.get_weights()]


@pytest.mark.parametrize("replicas", [1, 2])
def test_same_bits_with_threads_switched_every_microsecond_and_any_thread_count(replicas):
    before_threads, before_interval = intra_op.intra_op_threads(), sys.getswitchinterval()
    try:
        intra_op.set_intra_op_threads(1)
        plain = _train(replicas)
        intra_op.set_intra_op_threads(3)
        sys.setswitchinterval(1e-6)  # the GIL changes hands at every chance
        switched = _train(replicas)
    finally:
        sys.setswitchinterval(before_interval)
        intra_op.set_intra_op_threads(before_threads)
    assert switched == plain
