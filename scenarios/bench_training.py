"""Benchmark: one epoch of the Fashion-MNIST CNN at 1 and 4 virtual replicas (and TF, if installed).

Prints images/s for the tutorial's custom loop (global batch 64) on synthetic digits shaped
like Fashion-MNIST: simdist with MirroredStrategy on 1 and on 4 virtual GPUs and, when
TensorFlow is importable, TF's MirroredStrategy on 1 and 4 logical CPU devices, in the same
run. Goals (issue 5): simdist within 2x of TF-CPU at 4 replicas; simdist's 4-replica epoch
within 15 % of its 1-replica epoch.

    python scenarios/bench_training.py [--images 60000] [--batch 64]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from bench_core import tensorflow_model  # scenarios/ is on sys.path when run as a script


def data(n: int):
    from simdist.sim import load_synthetic_digits

    (images, labels), _ = load_synthetic_digits(n, 0)
    return images[..., None].astype(np.float32) / 255, labels.astype(np.int64)


def simdist_epoch(images, labels, replicas: int, batch: int) -> float:
    import simdist as tf
    from simdist.demo import create_model

    tf.random.set_seed(0)
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch, drop_remainder=True)
    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )

    def train_step(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(
                loss_object(y, model(x, training=True)), global_batch_size=batch
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    @tf.function
    def step(inputs):
        return strategy.reduce("SUM", strategy.run(train_step, args=(inputs,)), axis=None)

    start = time.perf_counter()
    steps = 0
    for inputs in strategy.experimental_distribute_dataset(dataset):
        step(inputs)
        steps += 1
    return steps * batch / (time.perf_counter() - start)


def tensorflow_epoch(tf, images, labels, replicas: int, batch: int) -> float:
    strategy = tf.distribute.MirroredStrategy([f"CPU:{i}" for i in range(replicas)])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch, drop_remainder=True)
    with strategy.scope():
        model = tensorflow_model(tf)
        optimizer = tf.keras.optimizers.Adam()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="none"
        )
        optimizer.build(model.trainable_variables)  # Keras 3 cannot create slots in run()

    def train_step(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            per_example = loss_object(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    @tf.function
    def step(inputs):
        return strategy.reduce("SUM", strategy.run(train_step, args=(inputs,)), axis=None)

    dist = strategy.experimental_distribute_dataset(dataset)
    step(next(iter(dist)))  # trace outside the timing
    start = time.perf_counter()
    steps = 0
    for inputs in dist:
        step(inputs)
        steps += 1
    return steps * batch / (time.perf_counter() - start)


def tensorflow_epochs(images, labels, replica_counts, batch: int):
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
    except ImportError:
        return None
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * max(replica_counts)
    )
    speeds = {r: tensorflow_epoch(tf, images, labels, r, batch) for r in replica_counts}
    return speeds, tf.__version__


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=60000)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    images, labels = data(args.images)
    counts = (1, 4)
    rows = [
        (f"simdist, {r} virtual GPU(s)", simdist_epoch(images, labels, r, args.batch))
        for r in counts
    ]
    tf_result = tensorflow_epochs(images, labels, counts, args.batch)
    if tf_result is not None:
        speeds, version = tf_result
        rows += [(f"TensorFlow {version}, {r} logical CPU(s)", speeds[r]) for r in counts]
    width = max(len(name) for name, _ in rows)
    print(f"one epoch of the Fashion-MNIST CNN, {args.images} images, global batch {args.batch}")
    print(f"{'what'.ljust(width)}  images/s")
    for name, speed in rows:
        print(f"{name.ljust(width)}  {speed:8.0f}")
    one, four = rows[0][1], rows[1][1]
    print(f"\nsimdist 4 replicas / 1 replica time: {one / four:.2f}x (goal <= 1.15x)")
    if tf_result is not None:
        print(f"simdist / TF time at 4 replicas: {speeds[4] / four:.2f}x (goal <= 2x)")


if __name__ == "__main__":
    main()
