"""Small training programs for the reduction-sensitivity tests (a script's body, as functions).

``SCRIPT`` is the same program as a file's text, for the command-line tests.
"""

from __future__ import annotations

import numpy as np

import simdist as tf

GLOBAL_BATCH = 16


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    # features spanning decades: gradient sums that round differently in each order
    x = rng.standard_normal((128, 16)) * 10.0 ** rng.integers(-3, 3, (128, 1))
    y = rng.integers(0, 8, 128)
    return x.astype(np.float32), y


def train(strategy_name: str = "mirrored", steps: int = 8, optimizer: str = "adam") -> None:
    """Train a Dense(8) classifier for ``steps`` steps, the custom-training tutorial's way."""
    if strategy_name == "mirrored":
        strategy = tf.distribute.MirroredStrategy()
    else:
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    x, y = _data()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
        opt = tf.keras.optimizers.Adam(0.01) if optimizer == "adam" else tf.keras.optimizers.SGD()
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(GLOBAL_BATCH)
    iterator = iter(strategy.experimental_distribute_dataset(dataset))

    def step(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            per_example = tf.keras.losses.sparse_categorical_crossentropy(
                labels, logits, from_logits=True
            )
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    for _ in range(steps):
        per_replica = strategy.run(step, args=(next(iterator),))
        strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


def mirrored() -> None:
    train("mirrored")


def multi_worker() -> None:
    train("multi_worker")


def untrained() -> None:
    """Runs a strategy but never applies gradients."""
    strategy = tf.distribute.MirroredStrategy()
    strategy.run(lambda: tf.constant(1.0))


SCRIPT = """
import sys
sys.path.insert(0, {folder!r})
import sensitivity_programs
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
sensitivity_programs.train("mirrored", steps)
"""
