"""Scenario: keras.io's "Multi-GPU distributed training with TensorFlow" guide, import swapped.

The guide (Keras 2 edition, ``from tensorflow import keras``) with ``import simdist as tf``:
a Functional model (``keras.Input`` -> two ``Dense(256, relu)`` -> ``Dense(10)``) made and
compiled inside ``MirroredStrategy().scope()``, ``model.fit(train_dataset, epochs=2,
validation_data=val_dataset)``, ``model.evaluate(test_dataset)``; then its fault-tolerance
part: ``ModelCheckpoint`` saving the whole model each epoch, and ``make_or_restore_model``
loading the newest checkpoint with ``keras.models.load_model`` and going on training.

One departure: the guide's ``ModelCheckpoint(filepath="ckpt-{epoch}")`` saves whole models
(SavedModel directories), but simdist's ``ModelCheckpoint`` writes a ``tf.train.Checkpoint``
at that name today (the callbacks part of issue 15 changes it), which ``load_model`` cannot
read; so each epoch's model is saved with ``model.save`` from a ``LambdaCallback`` instead.
And a model compiled with a ``Loss`` object comes back from ``load_model`` uncompiled today
(with a warning; the same issue changes it), so a restored model is compiled again.

The guide downloads MNIST; here the data are synthetic digits (``--samples`` of 784 pixels,
a fixed random linear rule for labels), the guide's other numbers kept (global batch
64 per replica, 10,000 validation examples scaled with ``--samples``).

    python scenarios/keras_io_multi_gpu.py                  # 4 virtual GPUs, the guide's 2 epochs
    python scenarios/keras_io_multi_gpu.py --samples 512 --epochs 1
"""

from __future__ import annotations

import argparse
import os
import tempfile
import warnings

import numpy as np

import simdist as tf

keras = tf.keras


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=4, help="virtual GPUs (default 4)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs (default 2, the guide's)")
    parser.add_argument("--samples", type=int, default=4096, help="synthetic training digits")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.replicas < 1 or args.epochs < 1 or args.samples < 64:
        parser.error("--replicas and --epochs must be >= 1, --samples >= 64")
    return args


def synthetic_mnist(samples: int, seed: int):
    """Digits-like data: pixels in [0, 255], labels from a fixed linear rule (learnable)."""
    rng = np.random.default_rng(seed)
    rule = rng.standard_normal((784, 10))

    def make(n):
        x = rng.integers(0, 256, (n, 784)).astype("float32")
        y = np.argmax((x / 255.0 - 0.5) @ rule, axis=1).astype("int64")
        return x, y

    return make(samples), make(max(64, samples // 6))


def get_compiled_model():
    # Make a simple 2-layer densely-connected neural network.
    inputs = keras.Input(shape=(784,))
    x = keras.layers.Dense(256, activation="relu")(inputs)
    x = keras.layers.Dense(256, activation="relu")(x)
    outputs = keras.layers.Dense(10)(x)
    model = keras.Model(inputs, outputs)
    compile_model(model)
    return model


def compile_model(model):
    model.compile(
        optimizer=keras.optimizers.Adam(),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )


def get_dataset(args, batch_size):
    (x_train, y_train), (x_test, y_test) = synthetic_mnist(args.samples, args.seed)
    # Preprocess the data (these are Numpy arrays)
    x_train = x_train.reshape(-1, 784).astype("float32") / 255
    x_test = x_test.reshape(-1, 784).astype("float32") / 255
    # Reserve num_val_samples samples for validation
    num_val_samples = max(batch_size, len(x_train) // 6)
    x_val = x_train[-num_val_samples:]
    y_val = y_train[-num_val_samples:]
    x_train = x_train[:-num_val_samples]
    y_train = y_train[:-num_val_samples]
    return (
        tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(batch_size),
        tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(batch_size),
        tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(batch_size),
    )


def make_or_restore_model(checkpoint_dir):
    # Either restore the latest model, or create a fresh one if there is no checkpoint
    # available.
    checkpoints = [os.path.join(checkpoint_dir, name) for name in os.listdir(checkpoint_dir)]
    if checkpoints:
        latest_checkpoint = max(checkpoints, key=os.path.getctime)
        print("Restoring from", os.path.basename(latest_checkpoint))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "loaded uncompiled": see the module docstring
            model = keras.models.load_model(latest_checkpoint)
        if model.optimizer is None:
            compile_model(model)
        return model
    print("Creating a new model")
    return get_compiled_model()


def main(argv=None) -> dict:
    args = parse_args(argv)
    tf.config.set_virtual_devices(gpus=args.replicas)
    tf.random.set_seed(args.seed)

    # Create a MirroredStrategy.
    strategy = tf.distribute.MirroredStrategy()
    print(f"Number of devices: {strategy.num_replicas_in_sync}")

    # Open a strategy scope.
    with strategy.scope():
        # Everything that creates variables should be under the strategy scope.
        # In general this is only model construction & `compile()`.
        model = get_compiled_model()

    # Train the model on all available devices.
    batch_size = 64 * strategy.num_replicas_in_sync
    train_dataset, val_dataset, test_dataset = get_dataset(args, batch_size)
    history = model.fit(train_dataset, epochs=args.epochs, validation_data=val_dataset,
                        verbose=2)  # fmt: skip
    # Test the model on all available devices.
    test_loss, test_accuracy = model.evaluate(test_dataset, verbose=0)
    print(f"fit losses: {[round(v, 4) for v in history.history['loss']]}")
    print(f"evaluate: loss {test_loss:.4f} accuracy {test_accuracy:.4f}")

    # Using callbacks to ensure fault tolerance.
    with tempfile.TemporaryDirectory() as checkpoint_dir:

        def run_training(epochs=1):
            with strategy.scope():
                model = make_or_restore_model(checkpoint_dir)
            callbacks = [
                # This callback saves the whole model every epoch (the guide's ModelCheckpoint;
                # see the module docstring). We include the current epoch in the folder name.
                keras.callbacks.LambdaCallback(
                    on_epoch_end=lambda epoch, logs: model.save(
                        os.path.join(checkpoint_dir, f"ckpt-{epoch + 1}")
                    )
                )
            ]
            model.fit(train_dataset, epochs=epochs, callbacks=callbacks,
                      validation_data=val_dataset, verbose=2)  # fmt: skip
            return model

        # Running the first time creates the model
        first = run_training(epochs=1)
        # Calling the same function again will resume from where we left off
        resumed = run_training(epochs=1)
        saved = sorted(os.listdir(checkpoint_dir))
        print(f"checkpoints: {saved}")
        same_kind = type(resumed).__name__ == type(first).__name__ == "Functional"
        print(f"restored a Functional model: {same_kind}")
    return {"history": history.history, "test_accuracy": test_accuracy, "checkpoints": saved}


if __name__ == "__main__":
    main()
