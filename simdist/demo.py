"""TensorFlow's tutorial "Custom training with tf.distribute.Strategy", on virtual GPUs.

The tutorial's code (``custom_training_tutorial``) with one changed import: a CNN under
``tf.distribute.MirroredStrategy()`` (all virtual GPUs of the simulated host, 4 by default),
distributed datasets, per-example losses scaled by ``tf.nn.compute_average_loss``, Adam,
accuracy metrics, a checkpoint every 2 epochs, then the last checkpoint restored into a new
model *without* a strategy and evaluated. The data is the download-free synthetic digits
set (``simdist.sim.load_synthetic_digits``), shaped like Fashion-MNIST.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import simdist as tf
from simdist.keras.engine.progbar import Progbar
from simdist.sim import load_synthetic_digits


def create_model():
    """The tutorial's Fashion-MNIST CNN, verbatim (``fashion-mnist-cnn`` to the cost model)."""
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


@dataclasses.dataclass(frozen=True)
class Training:
    """What the tutorial builds under ``strategy.scope()``, and its step functions."""

    model: Any
    optimizer: Any
    checkpoint: Any  # tf.train.Checkpoint(optimizer=..., model=...)
    loss_object: Any
    test_loss: Any
    train_accuracy: Any
    test_accuracy: Any
    train_step: Callable  # one replica's step, for strategy.run
    distributed_train_step: Callable  # tf.function: strategy.run, then the SUM of the losses
    distributed_test_step: Callable


def build_training(strategy, global_batch_size: int) -> Training:
    """The tutorial's model, loss, metrics, optimizer, checkpoint and steps under ``strategy``:
    per-example losses scaled by the global batch (``tf.nn.compute_average_loss``), Adam."""
    with strategy.scope():
        # Per-example losses; the reduction is ours: divide by the global batch.
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )

        def compute_loss(labels, predictions):
            per_example_loss = loss_object(labels, predictions)
            return tf.nn.compute_average_loss(per_example_loss, global_batch_size=global_batch_size)

        test_loss = tf.keras.metrics.Mean(name="test_loss")
        train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
        test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()
        checkpoint = tf.train.Checkpoint(optimizer=optimizer, model=model)

    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = compute_loss(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        train_accuracy.update_state(labels, predictions)
        return loss

    def test_step(inputs):
        images, labels = inputs
        predictions = model(images, training=False)
        test_loss.update_state(loss_object(labels, predictions))
        test_accuracy.update_state(labels, predictions)

    @tf.function
    def distributed_train_step(dataset_inputs):
        per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    @tf.function
    def distributed_test_step(dataset_inputs):
        return strategy.run(test_step, args=(dataset_inputs,))

    return Training(
        model,
        optimizer,
        checkpoint,
        loss_object,
        test_loss,
        train_accuracy,
        test_accuracy,
        train_step,
        distributed_train_step,
        distributed_test_step,
    )


def evaluate_restored(checkpoint_path: str, images, labels, batch_size: int):
    """The accuracy of a new model restored from ``checkpoint_path`` *without* a strategy
    (the tutorial's last part): a fresh model and optimizer, ``Checkpoint.restore``, one pass
    over the test set in a ``tf.function``."""
    eval_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="eval_accuracy")
    new_model = create_model()
    new_optimizer = tf.keras.optimizers.Adam()
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch_size)

    @tf.function
    def eval_step(images, labels):
        predictions = new_model(images, training=False)
        eval_accuracy(labels, predictions)

    tf.train.Checkpoint(optimizer=new_optimizer, model=new_model).restore(checkpoint_path)
    for batch_images, batch_labels in dataset:
        eval_step(batch_images, batch_labels)
    return eval_accuracy.result()


def run(
    epochs: int = 4,
    num_train: int = 12000,
    num_test: int = 1000,
    batch_size_per_replica: int = 16,
    seed: int = 0,
    checkpoint_dir: str | None = None,
    trace_path: str | None = None,
    progress: bool = False,
    out=print,
) -> dict:
    """Run the tutorial; return the final metrics. Prints the tutorial's epoch lines."""
    tf.random.set_seed(seed)
    (train_images, train_labels), (test_images, test_labels) = load_synthetic_digits(
        num_train, num_test, seed=seed
    )
    train_images = train_images[..., None] / np.float32(255)
    test_images = test_images[..., None] / np.float32(255)

    strategy = tf.distribute.MirroredStrategy()
    out(f"Number of devices: {strategy.num_replicas_in_sync}")
    global_batch_size = batch_size_per_replica * strategy.num_replicas_in_sync

    train_dataset = (
        tf.data.Dataset.from_tensor_slices((train_images, train_labels))
        .shuffle(len(train_images), seed=seed)
        .batch(global_batch_size)
    )
    test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(
        global_batch_size
    )
    train_dist_dataset = strategy.experimental_distribute_dataset(train_dataset)
    test_dist_dataset = strategy.experimental_distribute_dataset(test_dataset)

    training = build_training(strategy, global_batch_size)
    train_accuracy, test_loss, test_accuracy = (
        training.train_accuracy,
        training.test_loss,
        training.test_accuracy,
    )
    distributed_train_step = training.distributed_train_step

    owned_dir = None
    if checkpoint_dir is None:
        owned_dir = tempfile.TemporaryDirectory(prefix="simdist-demo-")
        checkpoint_dir = owned_dir.name
    checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")

    steps = 0
    start = time.perf_counter()
    result: dict = {}
    steps_per_epoch = -(-len(train_images) // global_batch_size)
    for epoch in range(epochs):
        total_loss = 0.0
        num_batches = 0
        bar = Progbar(steps_per_epoch, verbose=1 if progress else 0)
        for x in train_dist_dataset:
            total_loss += distributed_train_step(x)
            num_batches += 1
            bar.update(
                num_batches,
                [("loss", float(total_loss) / num_batches), ("accuracy", train_accuracy.result())],
            )
        train_loss = total_loss / num_batches
        steps += num_batches
        for x in test_dist_dataset:
            training.distributed_test_step(x)
        if epoch % 2 == 0:
            training.checkpoint.save(checkpoint_prefix)
        template = "Epoch {}, Loss: {}, Accuracy: {}, Test Loss: {}, Test Accuracy: {}"
        out(
            template.format(
                epoch + 1,
                train_loss,
                train_accuracy.result() * 100,
                test_loss.result(),
                test_accuracy.result() * 100,
            )
        )
        result = {
            "train_loss": float(train_loss),
            "train_accuracy": float(train_accuracy.result()),
            "test_loss": float(test_loss.result()),
            "test_accuracy": float(test_accuracy.result()),
        }
        test_loss.reset_states()
        train_accuracy.reset_states()
        test_accuracy.reset_states()
    elapsed = time.perf_counter() - start

    # Restore the latest checkpoint and test, without a strategy (the tutorial's last part).
    latest = tf.train.latest_checkpoint(checkpoint_dir)
    restored = evaluate_restored(latest, test_images, test_labels, global_batch_size)
    out(f"Accuracy after restoring the saved model without strategy: {restored * 100}")
    result["restored_accuracy"] = float(restored)
    result["checkpoint"] = latest
    out(
        f"{steps} train steps on {strategy.num_replicas_in_sync} virtual GPUs in {elapsed:.1f} s "
        f"({1000 * elapsed / max(steps, 1):.1f} ms/step including evaluation)"
    )
    if owned_dir is not None:
        owned_dir.cleanup()

    # One more training step, recorded: what it would cost on a DGX H100 (simdist.sim.profile).
    with tf.sim.profile(topology="dgx-h100") as prof:
        distributed_train_step(next(iter(train_dist_dataset)))
    out("")
    out(str(prof.report()))
    if trace_path is not None:
        prof.write_chrome_trace(trace_path)
        out(f"Chrome trace of that step: {trace_path} (open it in https://ui.perfetto.dev)")
    result["profiled_step_time"] = prof.report().total_time
    result["predicted"] = report_predicted_cost(training.model, batch_size_per_replica, out)
    return result


PRESETS = ("dgx-h100", "h100-cluster:2", "v4-32")


def report_predicted_cost(model, batch_per_device: int, out=print) -> dict:
    """Price this model's training step on hardware the user may not have (simdist.cost).

    An analytical roofline of each layer plus the gradient all-reduce priced on the preset's
    links (alpha-beta with contention), weak scaling at a fixed batch per device.
    """
    from simdist.cost import format_scaling_table, scaling_table
    from simdist.topology import get_topology

    predicted = {}
    for name in PRESETS:
        topology = get_topology(name)
        counts = [c for c in (1, 2, 4, 8, 16) if c <= topology.num_devices]
        rows = scaling_table(model, (28, 28, 1), batch_per_device, topology, counts)
        out("")
        out(f"Predicted step on {name} ({len(counts)} sizes, {batch_per_device} per device):")
        out(format_scaling_table(rows))
        predicted[name] = rows
    return predicted
