"""Benchmark: the Fashion-MNIST CNN's train step (batch 64, forward + backward + Adam) on simdist.

Prints one table per load (quiet, then two busy-loop processes beside it): ms per call,
attained GFLOP/s, and that as a fraction of NumPy's float32 GEMM rate on 1024x1024 matrices
with one BLAS thread; for simdist's step and the GEMM also the same with two BLAS threads
(the evidence for the BLAS thread policy, ``simdist.core.blas_threads``), and, if
TensorFlow is importable, the same model and step in TF on the CPU. The contenders run in
turns, block by block, in one process (``side_by_side``), so their ratios compare the same
minutes of a shared machine.

    python scenarios/bench_core.py [--steps 10] [--rounds 5] [--batch 64] [--busy 0 2]
"""

from __future__ import annotations

import argparse

import numpy as np
from busy_load import busy, label  # scenarios/ is on sys.path when run as a script
from side_by_side import print_table, side_by_side


def conv_flops(batch, h, w, cin, cout, k) -> tuple[int, int, int]:
    """(forward, weight-gradient, input-gradient) multiply-add FLOPs of a VALID conv."""
    ho, wo = h - k + 1, w - k + 1
    fwd = 2 * batch * ho * wo * cout * k * k * cin
    return fwd, fwd, fwd


def step_flops(batch: int) -> int:
    """FLOPs of one training step of the Fashion-MNIST CNN, counting the GEMM-shaped work only.

    Forward + weight gradients for every layer, input gradients for every layer but the
    first (nothing needs d(loss)/d(images), and simdist's tape does not compute it).
    Element-wise ops, pooling and Adam are left out (a few % of the total).
    """
    c1 = conv_flops(batch, 28, 28, 1, 32, 3)
    c2 = conv_flops(batch, 13, 13, 32, 64, 3)
    d1 = 2 * batch * 1600 * 64
    d2 = 2 * batch * 64 * 10
    return (c1[0] + c1[1]) + sum(c2) + 3 * d1 + 3 * d2


def gemm(size: int = 1024):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    return lambda: a @ b


def with_blas_threads(threads: int, fn):
    """``fn`` run with NumPy's BLAS at ``threads`` threads (simdist's policy is one)."""
    import threadpoolctl

    controller = threadpoolctl.ThreadpoolController()

    def run():
        with controller.limit(limits=threads, user_api="blas"):
            fn()

    return run


def with_intra_op_threads(threads: int, fn):
    """``fn`` run with simdist's intra-op parallelism at ``threads`` threads."""
    from simdist.core import intra_op

    def run():
        before = intra_op.intra_op_threads()
        intra_op.set_intra_op_threads(threads)
        try:
            fn()
        finally:
            intra_op.set_intra_op_threads(before)

    return run


def make_batch(batch: int):
    rng = np.random.default_rng(0)
    images = rng.random((batch, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, size=batch).astype(np.int64)
    return images, labels


def simdist_step(batch: int):
    import simdist as tf
    from simdist.demo import create_model  # the tutorial's Fashion-MNIST CNN

    tf.random.set_seed(0)
    images, labels = make_batch(batch)
    images, labels = tf.constant(images), tf.constant(labels)
    model = create_model()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )
    optimizer = tf.keras.optimizers.Adam()

    def step():
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(
                loss_object(labels, model(images, training=True)), global_batch_size=batch
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))

    return step


def tensorflow_model(tf):
    """The tutorial's Fashion-MNIST CNN in real TensorFlow (``tf`` is the ``tensorflow`` module)."""
    return tf.keras.Sequential(
        [
            tf.keras.Input((28, 28, 1)),
            tf.keras.layers.Conv2D(32, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(64, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ]
    )


def tensorflow_step(batch: int):
    try:
        import tensorflow as tf
    except ImportError:
        return None
    tf.random.set_seed(0)
    images, labels = make_batch(batch)
    model = tensorflow_model(tf)
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    optimizer = tf.keras.optimizers.Adam()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(
                loss_object(y, model(x, training=True)), global_batch_size=batch
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    x, y = tf.constant(images), tf.constant(labels)
    step(x, y)  # TF's runtime sets glibc's malloc thresholds while it builds: let it, then
    reassert_malloc_policy()  # put simdist's back
    return lambda: step(x, y).numpy(), tf.__version__


def reassert_malloc_policy() -> None:
    """simdist's allocator policy again, after TensorFlow changed glibc's thresholds.

    Measured: once TensorFlow has built a model in the process, simdist's step on the same
    process took 5,000-7,000 page faults and 11-16 ms of system time per step (against
    about 20 and 0.3 ms), which is TensorFlow's allocator setting, not simdist's work: the
    side-by-side tables compare the two as each runs in a process of its own.
    """
    from simdist.core import malloc_policy

    malloc_policy.apply_policy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="steps per timing block")
    parser.add_argument("--rounds", type=int, default=5, help="alternating blocks (median)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument(
        "--busy", type=int, nargs="+", default=[0, 2], help="busy processes beside it, per run"
    )
    args = parser.parse_args()

    import simdist  # noqa: F401 - its BLAS policy (one thread) applies from here on

    flops = step_flops(args.batch)
    contenders = {
        "numpy float32 GEMM 1024^3, 1 BLAS thread": gemm(),
        "numpy float32 GEMM 1024^3, 2 BLAS threads": with_blas_threads(2, gemm()),
        f"simdist CNN step (batch {args.batch})": simdist_step(args.batch),
        "simdist, the same step with 2 BLAS threads": with_blas_threads(
            2, simdist_step(args.batch)
        ),
        "simdist, the same step on 1 intra-op thread": with_intra_op_threads(
            1, simdist_step(args.batch)
        ),
    }
    gemm_flops = {name: 2 * 1024**3 for name in contenders if "GEMM" in name}
    tf_result = tensorflow_step(args.batch)
    if tf_result is not None:
        tf_fn, tf_version = tf_result
        contenders[f"TensorFlow {tf_version} CPU, same step"] = tf_fn
    for load in args.busy:
        with busy(load):
            ms = side_by_side(contenders, args.rounds, args.steps)
        rate = gemm_flops | {name: flops for name in contenders if name not in gemm_flops}
        gflops = {name: rate[name] / (ms[name] / 1000) / 1e9 for name in contenders}
        peak = gflops["numpy float32 GEMM 1024^3, 1 BLAS thread"]
        print(f"\n{label(load)}: median of {args.rounds} alternating blocks of {args.steps}")
        rows = [
            (name, f"{ms[name]:.2f}", f"{gflops[name]:.1f}", f"{100 * gflops[name] / peak:.0f}%")
            for name in contenders
        ]
        print_table(("what", "ms/call", "GFLOP/s", "of 1-thread GEMM"), rows)
        simdist_ms = ms[f"simdist CNN step (batch {args.batch})"]
        if tf_result is not None:
            tf_ms = ms[f"TensorFlow {tf_version} CPU, same step"]
            print(f"simdist/TF time ratio: {simdist_ms / tf_ms:.2f}x")
    if tf_result is None:
        print("TensorFlow not importable: no TF comparison (pip install '.[tensorflow]').")


if __name__ == "__main__":
    main()
