"""Benchmark: which ops gain from simdist's intra-op threads, and which lose.

The ops of the tutorial CNN's step at batch 64, each forward and backward (one tape), timed
three ways side by side (``side_by_side``): on the calling thread alone (1 intra-op
thread), on 2 threads as simdist's policy shares them (blocks below
``intra_op.MIN_SHARED_FLOPS`` stay on the caller), and on 2 threads with every block
shared. The evidence for ``MIN_SHARED_FLOPS``: a block must hold enough arithmetic to pay
for the GIL hand-overs across CPUs that sharing it costs.

    python scenarios/bench_intra_op.py [--rounds 5] [--steps 10] [--busy 0 2]
"""

from __future__ import annotations

import argparse

import numpy as np
from busy_load import busy, label  # scenarios/ is on sys.path when run as a script
from side_by_side import print_table, side_by_side


def ops() -> dict[str, object]:
    """Each op of the step as a callable running its forward and its backward."""
    import simdist as tf
    from simdist.core.ops.fused_ops import conv2d_bias_activation

    rng = np.random.default_rng(0)

    def conv(images, in_hw, in_c, out_c):
        x = tf.constant(rng.random((images, in_hw, in_hw, in_c), dtype=np.float32))
        f = tf.Variable(rng.standard_normal((3, 3, in_c, out_c), dtype=np.float32))
        b = tf.Variable(np.zeros(out_c, np.float32))
        wanted = [f, b] if in_c == 1 else [x, f, b]  # the first layer needs no input gradient

        def run():
            with tf.GradientTape() as tape:
                tape.watch(x)
                total = tf.reduce_sum(conv2d_bias_activation(x, f, b, activation="relu"))
            tape.gradient(total, wanted)

        return run

    def pool(shape):
        y = tf.constant(np.maximum(rng.standard_normal(shape, dtype=np.float32), 0))

        def run():
            with tf.GradientTape() as tape:
                tape.watch(y)
                total = tf.reduce_sum(tf.nn.max_pool2d(y, 2, 2, "VALID"))
            tape.gradient(total, y)

        return run

    return {
        "Conv2D 1 (28x28x1 -> 32)": conv(64, 28, 1, 32),
        "MaxPool 1 (26x26x32)": pool((64, 26, 26, 32)),
        "Conv2D 2 (13x13x32 -> 64)": conv(64, 13, 32, 64),
        "MaxPool 2 (11x11x64)": pool((64, 11, 11, 64)),
    }


def with_policy(fn, threads: int, share_all: bool):
    from simdist.core import intra_op

    def run():
        before, threshold = intra_op.intra_op_threads(), intra_op.MIN_SHARED_FLOPS
        intra_op.set_intra_op_threads(threads)
        if share_all:
            intra_op.MIN_SHARED_FLOPS = 0
        try:
            fn()
        finally:
            intra_op.set_intra_op_threads(before)
            intra_op.MIN_SHARED_FLOPS = threshold

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating blocks (median)")
    parser.add_argument("--steps", type=int, default=10, help="calls per timing block")
    parser.add_argument("--busy", type=int, nargs="+", default=[0], help="busy processes beside")
    args = parser.parse_args()
    ways = {"1 thread": (1, False), "2, the policy": (2, False), "2, every block shared": (2, True)}
    for load in args.busy:
        rows = []
        with busy(load):
            for name, fn in ops().items():
                contenders = {way: with_policy(fn, *how) for way, how in ways.items()}
                ms = side_by_side(contenders, args.rounds, args.steps)
                rows.append((name, *(f"{ms[way]:.2f}" for way in ways)))
        print(
            f"\nforward + backward per op, batch 64, ms, {label(load)} "
            f"(median of {args.rounds} alternating blocks of {args.steps} calls)"
        )
        print_table(("op", *ways), rows)


if __name__ == "__main__":
    main()
