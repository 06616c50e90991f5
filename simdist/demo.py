"""The main job: train the seeds' CNN with the seeds' custom training loop, and report it.

This is the tutorial's loop (``custom_training_tutorial``) on simdist: a Sequential CNN,
per-example losses scaled by ``tf.nn.compute_average_loss``, Adam, accuracy metrics, a
``tf.function`` train step. The data is the download-free synthetic digits set
(``simdist.sim.load_synthetic_digits``), shaped like Fashion-MNIST.
"""

from __future__ import annotations

import time

import numpy as np

import simdist as tf
from simdist.sim import load_synthetic_digits


def create_model():
    """The seeds' model, verbatim."""
    return tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(32, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(64, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )


def run(
    epochs: int = 3,
    num_train: int = 6000,
    num_test: int = 1000,
    batch_size: int = 64,
    seed: int = 0,
    out=print,
) -> dict:
    """Train and evaluate; return the final metrics (and print the seeds' epoch lines)."""
    tf.random.set_seed(seed)
    (train_images, train_labels), (test_images, test_labels) = load_synthetic_digits(
        num_train, num_test, seed=seed
    )
    train_images = train_images[..., None] / np.float32(255)
    test_images = test_images[..., None] / np.float32(255)

    train_dataset = (
        tf.data.Dataset.from_tensor_slices((train_images, train_labels))
        .shuffle(len(train_images), seed=seed)
        .batch(batch_size)
    )
    test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(batch_size)

    model = create_model()
    optimizer = tf.keras.optimizers.Adam()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")
    test_loss = tf.keras.metrics.Mean(name="test_loss")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            per_example_loss = loss_object(labels, predictions)
            loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=batch_size)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        train_accuracy.update_state(labels, predictions)
        return loss

    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        test_loss.update_state(loss_object(labels, predictions))
        test_accuracy.update_state(labels, predictions)

    out(
        f"simdist demo: the seeds' CNN on {num_train} synthetic digits, batch {batch_size}, "
        f"{epochs} epoch(s), 1 device ({tf.keras.backend.floatx()})"
    )
    steps = 0
    start = time.perf_counter()
    for epoch in range(epochs):
        total_loss, num_batches = 0.0, 0
        for images, labels in train_dataset:
            total_loss += float(train_step(images, labels))
            num_batches += 1
        steps += num_batches
        for images, labels in test_dataset:
            test_step(images, labels)
        out(
            f"Epoch {epoch + 1}, Loss: {total_loss / num_batches}, "
            f"Accuracy: {train_accuracy.result() * 100}, Test Loss: {test_loss.result()}, "
            f"Test Accuracy: {test_accuracy.result() * 100}"
        )
        result = {
            "train_loss": total_loss / num_batches,
            "train_accuracy": float(train_accuracy.result()),
            "test_loss": float(test_loss.result()),
            "test_accuracy": float(test_accuracy.result()),
        }
        for metric in (train_accuracy, test_accuracy, test_loss):
            metric.reset_states()
    elapsed = time.perf_counter() - start
    out(
        f"{steps} train steps in {elapsed:.1f} s ({1000 * elapsed / max(steps, 1):.1f} ms/step "
        "including evaluation)"
    )
    return result
