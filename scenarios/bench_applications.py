"""How long simdist takes to build ``tf.keras.applications`` models and run one image, and what
the cost model predicts for ``ResNet50(weights=None)`` next to its built-in ResNet-50 v1.5.

    python3 scenarios/bench_applications.py [--models ResNet50,MobileNetV2] [--repeats 3]

Prints one row per model: the time to build it at 224x224 (``weights=None``: layer calls on
the Functional API's probes and weight initialisation), and the median of ``--repeats``
forward passes of one 224x224 image (inference). Then the predicted training step of Keras's
ResNet50 (v1) and of ``simdist cost step --model resnet50`` (v1.5) at 256 images per GPU on
the ``dgx-a100`` preset, 1 and 8 GPUs, SGD with momentum, float32 (TF32), with their FLOPs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import simdist as tf
from simdist.cost import layer_costs, price_step
from simdist.sim.throughput_validation import resnet50 as resnet50_v15
from simdist.topology import get_topology


def _build_and_run(name: str, repeats: int) -> tuple[float, float, int]:
    tf.keras.backend.clear_session()
    start = time.perf_counter()
    model = getattr(tf.keras.applications, name)(weights=None)
    built = time.perf_counter() - start
    image = np.random.default_rng(0).uniform(0, 255, (1, 224, 224, 3)).astype("float32")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model(image, training=False)
        times.append(time.perf_counter() - start)
    return built, statistics.median(times), model.count_params()


def _gflops(model) -> float:
    """Forward GFLOPs of one 224x224 image."""
    costs = layer_costs(model, (224, 224, 3), batch=1)
    return sum(op.flops for cost in costs for op in cost.forward) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="ResNet50,MobileNetV2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-cost", action="store_true")
    args = parser.parse_args()
    print("| model | weights | build at 224x224 | forward, 1 image (median) |")
    print("| --- | --- | --- | --- |")
    for name in args.models.split(","):
        built, forward, params = _build_and_run(name, args.repeats)
        print(f"| {name} | {params:,} | {built:.2f} s | {forward * 1e3:.0f} ms |")
    if args.skip_cost:
        return
    topology = get_topology("dgx-a100")
    models = {
        "tf.keras.applications.ResNet50 (v1)": tf.keras.applications.ResNet50(weights=None),
        "cost step --model resnet50 (v1.5)": resnet50_v15(),
    }
    print()
    print("| model | weights | forward GFLOPs/image | GPUs | predicted step | images/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, model in models.items():
        gflops = _gflops(model)
        for gpus in (1, 8):
            step = price_step(
                model, (224, 224, 3), 256 * gpus, topology, gpus, optimizer="momentum"
            )
            print(
                f"| {label} | {model.count_params():,} | {gflops:.2f} | {gpus} | "
                f"{step.step_time * 1e3:.1f} ms | {256 * gpus / step.step_time:.0f} |"
            )


if __name__ == "__main__":
    main()
