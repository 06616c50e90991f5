"""Benchmark: what a simulated replica costs, from 1 to 32 virtual replicas.

The tutorial's CNN train step (forward, loss, gradient, Adam, all-reduce) under
MirroredStrategy on N virtual GPUs, in two series: the global batch fixed (64 images split N
ways: the arithmetic stays the same, so what grows is the per-replica fixed cost) and the
batch per replica fixed (16 images each: N times the arithmetic). All step functions run in
turns, block by block, in one process (``side_by_side``), so the rows compare the same
minutes of a shared machine. The last columns say what one more replica costs:
``(t(N) - t(1)) / (N - 1)``.

    python scenarios/bench_replica_scale.py [--replicas 1 2 4 8 16 32] [--busy 0]
"""

from __future__ import annotations

import argparse

import numpy as np
from busy_load import busy, label  # scenarios/ is on sys.path when run as a script
from side_by_side import print_table, side_by_side


def step_function(replicas: int, global_batch: int):
    """One training step of the tutorial's CNN on ``replicas`` virtual GPUs, as a callable."""
    import simdist as tf
    from simdist.demo import create_model

    tf.random.set_seed(0)
    rng = np.random.default_rng(0)
    images = rng.random((global_batch, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, global_batch).astype(np.int64)
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(global_batch).repeat()
    with strategy.scope():
        model = create_model()
        optimizer = tf.keras.optimizers.Adam()
        loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction=tf.keras.losses.Reduction.NONE
        )

    def train_step(inputs):
        x, y = inputs
        with tf.GradientTape() as tape:
            per_example = loss_object(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    iterator = iter(strategy.experimental_distribute_dataset(dataset))
    return lambda: strategy.reduce("SUM", strategy.run(train_step, args=(next(iterator),)), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--global-batch", type=int, default=64, help="the fixed global batch")
    parser.add_argument("--per-replica", type=int, default=16, help="the fixed per-replica batch")
    parser.add_argument("--rounds", type=int, default=3, help="alternating blocks (median)")
    parser.add_argument("--steps", type=int, default=3, help="steps per block")
    parser.add_argument("--busy", type=int, nargs="+", default=[0], help="busy processes beside")
    args = parser.parse_args()
    if any(args.global_batch % n for n in args.replicas):
        parser.error(f"--global-batch {args.global_batch} must be divisible by every replica count")
    counts = sorted(set(args.replicas))
    import simdist as tf

    tf.config.set_virtual_devices(gpus=max(counts))  # a simulated host with enough GPUs
    contenders = {}
    for n in counts:
        contenders[("global", n)] = step_function(n, args.global_batch)
        contenders[("per_replica", n)] = step_function(n, n * args.per_replica)
    for load in args.busy:
        with busy(load):
            ms = side_by_side(contenders, args.rounds, args.steps)
        print(f"\nthe tutorial's CNN train step, {label(load)} (median of {args.rounds} blocks)")
        first = counts[0]
        rows = []
        for n in counts:
            fixed, grown = ms[("global", n)], ms[("per_replica", n)]
            extra = n - first
            per_fixed = f"{(fixed - ms[('global', first)]) / extra:.2f}" if extra else "-"
            per_grown = f"{(grown - ms[('per_replica', first)]) / extra:.2f}" if extra else "-"
            rows.append((n, f"{fixed:.1f}", per_fixed, f"{grown:.1f}", per_grown))
        print_table(
            (
                "replicas",
                f"ms/step, global batch {args.global_batch}",
                "ms per added replica",
                f"ms/step, {args.per_replica} per replica",
                "ms per added replica",
            ),
            rows,
        )


if __name__ == "__main__":
    main()
