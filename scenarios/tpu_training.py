"""Scenario: the TPU guide's custom training loop on a simulated Cloud TPU slice, then its cost.

With ``import simdist as tf``: resolve a TPU (``TPUClusterResolver``), connect, initialize the
TPU system, build a Keras model and optimizer under ``TPUStrategy``, distribute a dataset
batched with ``drop_remainder=True`` (static shapes, as TPUs want), and train with several
steps per ``tf.function`` call (``for _ in tf.range(steps): strategy.run(...)``). Then one
step is profiled (``simdist.sim.profile``) and priced on the slice's chips and ICI torus.

    python scenarios/tpu_training.py                 # v4-8 (4 chips, 4 replicas), 20 steps
    python scenarios/tpu_training.py --tpu v5e-8 --steps 8 --steps-per-call 4
"""

from __future__ import annotations

import argparse

import numpy as np

import simdist as tf


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tpu", default="v4-8", help="accelerator type (default v4-8)")
    parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    parser.add_argument("--steps-per-call", type=int, default=4, help="steps per tf.function")
    parser.add_argument("--batch-per-replica", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("steps", "steps_per_call", "batch_per_replica"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    tf.random.set_seed(args.seed)

    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=args.tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    strategy = tf.distribute.TPUStrategy(resolver)
    print(
        f"TPU {resolver.simdist_slice.accelerator_type}: {strategy.num_replicas_in_sync} replicas"
    )

    global_batch = args.batch_per_replica * strategy.num_replicas_in_sync
    rng = np.random.default_rng(args.seed)
    images = rng.random((global_batch * 4, 28, 28, 1), dtype=np.float32)
    labels = (images.reshape(len(images), -1).mean(axis=1) * 20).astype(np.int64) % 10
    dataset = (
        tf.data.Dataset.from_tensor_slices((images, labels))
        .shuffle(len(images), seed=args.seed)
        .repeat()
        .batch(global_batch, drop_remainder=True)
    )

    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Conv2D(8, 3, activation="relu", input_shape=(28, 28, 1)),
                tf.keras.layers.MaxPooling2D(),
                tf.keras.layers.Flatten(),
                tf.keras.layers.Dense(32, activation="relu"),
                tf.keras.layers.Dense(10),
            ]
        )
        optimizer = tf.keras.optimizers.Adam()
        training_loss = tf.keras.metrics.Mean("training_loss", dtype=tf.float32)
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )

    def step_fn(inputs):
        features, targets = inputs
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            loss = tf.nn.compute_average_loss(
                loss_object(targets, logits), global_batch_size=global_batch
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        training_loss.update_state(loss * strategy.num_replicas_in_sync)

    @tf.function
    def train_multiple_steps(iterator, steps):
        for _ in tf.range(steps):
            strategy.run(step_fn, args=(next(iterator),))

    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    done, losses = 0, []
    while done < args.steps:
        steps = min(args.steps_per_call, args.steps - done)
        train_multiple_steps(iterator, tf.convert_to_tensor(steps))
        done += steps
        losses.append(float(training_loss.result()))
        print(f"Step {done}: loss {losses[-1]:.4f}")
        training_loss.reset_state()

    topology = resolver.simdist_slice.topology()
    with tf.sim.profile(topology=topology) as prof:
        train_multiple_steps(iterator, tf.convert_to_tensor(1))
    report = prof.report()
    print(
        f"Predicted step on {topology.name} ({topology.num_devices} chips, "
        f"{strategy.num_replicas_in_sync} replicas): {report.total_time * 1e3:.4f} ms"
    )
    return {"losses": losses, "predicted_step_time": report.total_time}


if __name__ == "__main__":
    main()
