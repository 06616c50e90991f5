"""Scenario: TensorFlow's "Distributed training with Keras" tutorial, import swapped.

tensorflow.org/tutorials/distribute/keras with ``import simdist as tf``: ``MirroredStrategy``,
the input pipeline (``map(scale).cache().shuffle(10000).batch(64 * replicas)``), a model made
and compiled in the strategy's scope, ``fit`` with the tutorial's callbacks
(``ModelCheckpoint`` of the weights at ``ckpt_{epoch}``, ``LearningRateScheduler`` with its
``decay`` function, its ``PrintLR`` callback), ``load_weights(tf.train.latest_checkpoint(...))``,
``evaluate``, then ``model.save`` and ``tf.keras.models.load_model`` without and with a
strategy scope.

``--model`` picks the model: ``sequential`` is the tutorial's (Conv2D 32 -> MaxPooling2D ->
Flatten -> Dense 64 -> Dense 10); ``functional`` and ``subclassed`` are the same layers
written with ``tf.keras.Input``/``tf.keras.Model(inputs, outputs)`` and as a
``tf.keras.Model`` subclass (saved with its ``get_config`` and loaded with
``custom_objects``, as Keras requires). Departures: the tutorial downloads MNIST with
``tensorflow_datasets``; here the images are synthetic (``--samples`` 28x28 digits whose label
is the brightest of ten image regions). Its ``TensorBoard`` callback is left out (not yet in
simdist). And simdist's ``ModelCheckpoint(save_weights_only=True)`` at a plain prefix writes a
``tf.train.Checkpoint`` without updating the directory's ``checkpoint`` file, so
``tf.train.latest_checkpoint`` does not find it yet (the callbacks part of issue 15): the
last epoch's checkpoint is restored by name with ``tf.train.Checkpoint(model=model)``.

    python scenarios/keras_distributed_tutorial.py                 # the tutorial's 12 epochs
    python scenarios/keras_distributed_tutorial.py --epochs 2 --model subclassed
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import simdist as tf


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2, help="virtual GPUs (default 2)")
    parser.add_argument("--epochs", type=int, default=12, help="epochs (the tutorial's 12)")
    parser.add_argument("--samples", type=int, default=1024, help="synthetic training images")
    parser.add_argument("--model", choices=("sequential", "functional", "subclassed"),
                        default="sequential")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.replicas < 1 or args.epochs < 1 or args.samples < 64:
        parser.error("--replicas and --epochs must be >= 1, --samples >= 64")
    return args


def synthetic_digits(n: int, seed: int):
    """uint8 images (n, 28, 28, 1); the label is the region (of ten) with the bright blob."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 60, (n, 28, 28, 1)).astype(np.uint8)
    labels = rng.integers(0, 10, n).astype(np.int64)
    for i, label in enumerate(labels):
        row, col = divmod(int(label), 5)
        images[i, 4 + row * 12 : 12 + row * 12, 1 + col * 5 : 6 + col * 5, 0] = 250
    return images, labels


class DigitNet(tf.keras.Model):
    """The tutorial's layers as a subclassed model."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv = tf.keras.layers.Conv2D(32, 3, activation="relu")
        self.pool = tf.keras.layers.MaxPooling2D()
        self.flatten = tf.keras.layers.Flatten()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.logits = tf.keras.layers.Dense(10)

    def call(self, inputs, training=None):
        return self.logits(self.hidden(self.flatten(self.pool(self.conv(inputs)))))


def build_model(kind: str):
    layers = tf.keras.layers
    if kind == "sequential":
        return tf.keras.Sequential([
            layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
            layers.MaxPooling2D(),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            layers.Dense(10),
        ])  # fmt: skip
    if kind == "functional":
        inputs = tf.keras.Input(shape=(28, 28, 1))
        x = layers.Conv2D(32, 3, activation="relu")(inputs)
        x = layers.Dense(64, activation="relu")(layers.Flatten()(layers.MaxPooling2D()(x)))
        return tf.keras.Model(inputs, layers.Dense(10)(x))
    model = DigitNet()
    model.build((None, 28, 28, 1))
    return model


def main(argv=None) -> dict:
    args = parse_args(argv)
    tf.config.set_virtual_devices(gpus=args.replicas)
    tf.random.set_seed(args.seed)
    strategy = tf.distribute.MirroredStrategy()
    print(f"Number of devices: {strategy.num_replicas_in_sync}")

    # Set up the input pipeline (synthetic images instead of tfds' MNIST).
    train_images, train_labels = synthetic_digits(args.samples, args.seed)
    test_images, test_labels = synthetic_digits(max(64, args.samples // 4), args.seed + 1)
    BUFFER_SIZE = 10000
    BATCH_SIZE_PER_REPLICA = 64
    BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync

    def scale(image, label):
        image = tf.cast(image, tf.float32)
        image /= 255
        return image, label

    mnist_train = tf.data.Dataset.from_tensor_slices((train_images, train_labels))
    mnist_test = tf.data.Dataset.from_tensor_slices((test_images, test_labels))
    train_dataset = mnist_train.map(scale).cache().shuffle(BUFFER_SIZE).batch(BATCH_SIZE)
    eval_dataset = mnist_test.map(scale).batch(BATCH_SIZE)

    # Create the model.
    with strategy.scope():
        model = build_model(args.model)
        model.compile(
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            optimizer=tf.keras.optimizers.Adam(),
            metrics=["accuracy"],
        )

    # Define the callbacks.
    with tempfile.TemporaryDirectory() as work:
        checkpoint_dir = os.path.join(work, "training_checkpoints")
        checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch}")

        def decay(epoch):
            if epoch < 3:
                return 1e-3
            elif epoch >= 3 and epoch < 7:
                return 1e-4
            else:
                return 1e-5

        class PrintLR(tf.keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                print(
                    "\nLearning rate for epoch {} is {}".format(  # noqa: UP032 - the tutorial's
                        epoch + 1, model.optimizer.learning_rate.numpy()
                    )
                )

        callbacks = [
            tf.keras.callbacks.ModelCheckpoint(filepath=checkpoint_prefix,
                                               save_weights_only=True),
            tf.keras.callbacks.LearningRateScheduler(decay),
            PrintLR(),
        ]  # fmt: skip

        # Train and evaluate.
        history = model.fit(train_dataset, epochs=args.epochs, callbacks=callbacks, verbose=2)
        # The tutorial: model.load_weights(tf.train.latest_checkpoint(checkpoint_dir)).
        # Departure (see the module docstring): the last epoch's checkpoint, named.
        latest = checkpoint_prefix.format(epoch=args.epochs)
        tf.train.Checkpoint(model=model).restore(latest).expect_partial()
        eval_loss, eval_acc = model.evaluate(eval_dataset, verbose=0)
        print(f"Eval loss: {eval_loss:.4f}, Eval accuracy: {eval_acc:.4f}")

        # Save the model.
        path = os.path.join(work, "saved_model")
        model.save(path)
        custom = {"DigitNet": DigitNet}
        unreplicated_model = tf.keras.models.load_model(path, custom_objects=custom)
        unreplicated_model.compile(
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            optimizer=tf.keras.optimizers.Adam(),
            metrics=["accuracy"],
        )
        plain_loss, plain_acc = unreplicated_model.evaluate(eval_dataset, verbose=0)
        print(f"Eval loss: {plain_loss:.4f}, Eval Accuracy: {plain_acc:.4f}")
        with strategy.scope():
            replicated_model = tf.keras.models.load_model(path, custom_objects=custom)
            replicated_model.compile(
                loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                optimizer=tf.keras.optimizers.Adam(),
                metrics=["accuracy"],
            )
            mirrored_loss, mirrored_acc = replicated_model.evaluate(eval_dataset, verbose=0)
            print(f"Eval loss: {mirrored_loss:.4f}, Eval Accuracy: {mirrored_acc:.4f}")
        print(f"loaded model kind: {type(unreplicated_model).__name__}")
    return {
        "history": history.history,
        "eval": (eval_loss, eval_acc),
        "plain": (plain_loss, plain_acc),
        "mirrored": (mirrored_loss, mirrored_acc),
    }


if __name__ == "__main__":
    main()
