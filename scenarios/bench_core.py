"""Benchmark: the Fashion-MNIST CNN's train step (batch 64, forward + backward + Adam) on simdist.

Prints one table: ms/step, the step's FLOPs, attained GFLOP/s, and that as a fraction of
NumPy's float32 GEMM rate on 1024x1024 matrices measured in the same run (goal >= 35%).
If TensorFlow is importable, the same model and step in TF on the CPU, and simdist/TF
(goal <= 2x). Ratios are measured side by side in one process; the machine is shared and
noisy, so each figure is the median of several repeats.

    python scenarios/bench_core.py [--steps 20] [--batch 64]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


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


def median_ms(fn, repeats: int, inner: int) -> float:
    fn()  # warm up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) * 1000 / inner)
    return statistics.median(samples)


def gemm_gflops(repeats: int) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    ms = median_ms(lambda: a @ b, repeats, 5)
    return 2 * 1024**3 / (ms / 1000) / 1e9


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
    return lambda: step(x, y).numpy(), tf.__version__


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="steps per timing sample")
    parser.add_argument("--repeats", type=int, default=5, help="timing samples (median taken)")
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()

    flops = step_flops(args.batch)
    gemm = gemm_gflops(args.repeats)
    sd_ms = median_ms(simdist_step(args.batch), args.repeats, args.steps)
    sd_gflops = flops / (sd_ms / 1000) / 1e9
    rows = [
        ("numpy float32 GEMM 1024^3", "-", "-", f"{gemm:.1f}", "100%"),
        (
            f"simdist CNN step (batch {args.batch})",
            f"{sd_ms:.2f}",
            f"{flops / 1e9:.3f}",
            f"{sd_gflops:.1f}",
            f"{100 * sd_gflops / gemm:.0f}%",
        ),
    ]
    tf_result = tensorflow_step(args.batch)
    if tf_result is not None:
        tf_fn, tf_version = tf_result
        tf_ms = median_ms(tf_fn, args.repeats, args.steps)
        tf_gflops = flops / (tf_ms / 1000) / 1e9
        rows.append(
            (
                f"TensorFlow {tf_version} CPU, same step",
                f"{tf_ms:.2f}",
                f"{flops / 1e9:.3f}",
                f"{tf_gflops:.1f}",
                f"{100 * tf_gflops / gemm:.0f}%",
            )
        )
    header = ("what", "ms/step", "GFLOP/step", "GFLOP/s", "of GEMM rate")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print(
            "  ".join(
                str(c).rjust(w) if i else str(c).ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    print()
    print(f"simdist attains {100 * sd_gflops / gemm:.0f}% of the GEMM rate (goal >= 35%).")
    if tf_result is not None:
        print(f"simdist/TF time ratio: {sd_ms / tf_ms:.2f}x (goal <= 2x).")
    else:
        print("TensorFlow not importable: no TF comparison (pip install '.[tensorflow]').")


if __name__ == "__main__":
    main()
