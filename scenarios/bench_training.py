"""Benchmark: the tutorial's CNN train step at 1 and 4 replicas, simdist and TF side by side.

The tutorial's custom loop (global batch 64, Adam, ``compute_average_loss``) on synthetic
digits shaped like Fashion-MNIST: simdist's MirroredStrategy on 1 and 4 virtual GPUs (and
both with ``SIMDIST_REPLICA_HANDOVER=any``, the OS placing every wake-up of a replica
thread, to show what the default hand-over saves) and, when TensorFlow is importable,
TF's MirroredStrategy on 1 and 4 logical CPU devices. All contenders run in turns, block by
block, in one process (``side_by_side``), once on the machine as it is and once with two
busy-loop processes beside it (``--busy``), so every ratio compares the same minutes.
Goals (issue 13): simdist/TF <= 2.0 at 1 and 4 replicas beside two busy processes; on a
quiet machine <= 1.0 at 1 replica, and simdist's 4-replica step <= 1.15x its 1-replica step.

    python scenarios/bench_training.py [--images 6400] [--steps 10] [--rounds 5] [--busy 0 2]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from bench_core import reassert_malloc_policy, tensorflow_model  # scenarios/ is on sys.path
from busy_load import busy, label
from side_by_side import print_table, side_by_side

ANY_1 = "simdist, 1 virtual GPU, SIMDIST_REPLICA_HANDOVER=any"
ANY_4 = "simdist, 4 virtual GPUs, SIMDIST_REPLICA_HANDOVER=any"


def data(n: int):
    from simdist.sim import load_synthetic_digits

    (images, labels), _ = load_synthetic_digits(n, 0)
    return images[..., None].astype(np.float32) / 255, labels.astype(np.int64)


def simdist_step(images, labels, replicas: int, batch: int, handover: str = "same-cpu"):
    """A callable running one step with ``SIMDIST_REPLICA_HANDOVER=handover``."""
    import simdist as tf
    from simdist import settings
    from simdist.demo import create_model

    tf.random.set_seed(0)
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    dataset = dataset.batch(batch, drop_remainder=True).repeat()
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

    iterator = iter(strategy.experimental_distribute_dataset(dataset))

    def run_one():
        with settings.override(replica_handover=handover):
            step(next(iterator))

    return run_one


def tensorflow_step(tf, images, labels, replicas: int, batch: int):
    strategy = tf.distribute.MirroredStrategy([f"CPU:{i}" for i in range(replicas)])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    dataset = dataset.batch(batch, drop_remainder=True).repeat()
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

    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    return lambda: step(next(iterator)).numpy()


def tensorflow_steps(images, labels, replica_counts, batch: int):
    """``({replicas: step}, version)``, or None without TensorFlow."""
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
    except ImportError:
        return None
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * max(replica_counts)
    )
    steps = {r: tensorflow_step(tf, images, labels, r, batch) for r in replica_counts}
    for step in steps.values():
        step()  # TF's runtime sets glibc's malloc thresholds while it builds: let it, then
    reassert_malloc_policy()  # put simdist's back (simdist.core.malloc_policy)
    return steps, tf.__version__


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=6400, help="synthetic images cycled")
    parser.add_argument("--batch", type=int, default=64, help="global batch")
    parser.add_argument("--steps", type=int, default=10, help="steps per timing block")
    parser.add_argument("--rounds", type=int, default=5, help="alternating blocks (median)")
    parser.add_argument(
        "--busy", type=int, nargs="+", default=[0, 2], help="busy processes beside it, per run"
    )
    args = parser.parse_args()
    images, labels = data(args.images)
    contenders = {
        "simdist, 1 virtual GPU": simdist_step(images, labels, 1, args.batch),
        "simdist, 4 virtual GPUs": simdist_step(images, labels, 4, args.batch),
        ANY_1: simdist_step(images, labels, 1, args.batch, handover="any"),
        ANY_4: simdist_step(images, labels, 4, args.batch, handover="any"),
    }
    tf_result = tensorflow_steps(images, labels, (1, 4), args.batch)
    if tf_result is not None:
        steps, version = tf_result
        contenders[f"TensorFlow {version}, 1 logical CPU device"] = steps[1]
        contenders[f"TensorFlow {version}, 4 logical CPU devices"] = steps[4]
    for load in args.busy:
        with busy(load):
            ms = side_by_side(contenders, args.rounds, args.steps)
        print(
            f"\nthe tutorial's CNN train step, global batch {args.batch}, {label(load)} "
            f"(median of {args.rounds} alternating blocks of {args.steps} steps)"
        )
        rows = [(name, f"{t:.1f}", f"{args.batch / t * 1000:.0f}") for name, t in ms.items()]
        print_table(("what", "ms/step", "images/s"), rows)
        one, four = ms["simdist, 1 virtual GPU"], ms["simdist, 4 virtual GPUs"]
        ratio, anywhere = four / one, ms[ANY_4] / ms[ANY_1]
        print(
            f"simdist 4 replicas / 1 replica: {ratio:.2f}x, with handover=any {anywhere:.2f}x "
            "(goal <= 1.15x)"
        )
        if tf_result is not None:
            tf_one = ms[f"TensorFlow {version}, 1 logical CPU device"]
            tf_four = ms[f"TensorFlow {version}, 4 logical CPU devices"]
            print(f"simdist/TF at 1 replica: {one / tf_one:.2f}x, at 4: {four / tf_four:.2f}x")
    if tf_result is None:
        print("TensorFlow not importable: no TF rows (pip install '.[tensorflow]').")


if __name__ == "__main__":
    main()
