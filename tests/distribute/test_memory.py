"""A training loop keeps no batch alive: memory stays at the dataset, the model and one step."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import simdist as tf
from simdist.demo import create_model


def _loop(steps: int, use_function: bool):
    """Train the tutorial's Fashion-MNIST CNN for ``steps`` steps on 2 replicas; returns which
    steps' image tensors are still alive at the end (while the step function still exists) and
    tracemalloc's (current after step 2, peak after)."""
    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    images = rng.random((steps * 16, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, steps * 16)
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="none"
        )

    def train_step(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            per_example = loss_object(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=16)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    def step(inputs):
        return strategy.reduce("SUM", strategy.run(train_step, args=(inputs,)), axis=None)

    step = tf.function(step) if use_function else step
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(16)
    seen = []
    after_two = None
    for i, inputs in enumerate(strategy.experimental_distribute_dataset(dataset)):
        step(inputs)
        seen += [weakref.ref(t) for t in inputs[0].values]
        if i == 1:
            gc.collect()
            after_two = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
    del inputs
    gc.collect()
    alive = sorted({i // 2 for i, ref in enumerate(seen) if ref() is not None})
    return alive, after_two, tracemalloc.get_traced_memory()[1]


# True: tf.function keys its traces on a distributed input's component specs, not on the
# input object itself, so no step's batch stays alive in the trace keys
@pytest.mark.parametrize("use_function", [False, True])
def test_no_batch_outlives_its_step(use_function):
    tracemalloc.start()
    try:
        alive, after_two, peak = _loop(12, use_function)
    finally:
        tracemalloc.stop()
    # The last step's batch may stay referenced until the next step (the runner's last
    # arguments); no earlier one may.
    assert alive in ([], [11])
    # Steps 3..12 add no lasting memory: the peak above step 2's level is one step's work,
    # a small multiple of its forward activations (what the tape keeps for the backward
    # pass, the gradients, Adam's temporaries), not ten steps'.
    per_image = 26 * 26 * (10 + 32) + 13 * 13 * 32 + 11 * 11 * (289 + 64) + 5 * 5 * 64 + 1600
    activations = 16 * per_image * 4  # float32, 8 images on each of the 2 replicas
    assert peak - after_two < 3 * activations
