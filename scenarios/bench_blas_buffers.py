"""Benchmark: OpenBLAS's packing buffers mapped at import (``SIMDIST_BLAS_BUFFERS=map``, the
default) against left to the first products (``inherit``).

The effect belongs to a process (``simdist.core.blas_buffers``), so every measurement is a
fresh process, the two settings alternating, ``--rounds`` times: the tutorial CNN's two
float32 products of its second convolution at 64 images (the filter gradient
``cols.T @ dy``, 7744x289 by 7744x64, and the forward ``cols @ w``), and its train step
(global batch 64, Adam) at 1 and 4 virtual GPUs. Once on the machine as it is and once with
two busy-loop processes beside it (``--busy``).

    python scenarios/bench_blas_buffers.py [--rounds 3] [--steps 40] [--busy 0 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from busy_load import busy, label  # scenarios/ is on sys.path
from side_by_side import print_table

HERE = os.path.dirname(os.path.abspath(__file__))

_PRODUCTS = """
import time, numpy as np, simdist
rng = np.random.default_rng(0)
cols = rng.standard_normal((7744, 289)).astype(np.float32)
dy = rng.standard_normal((7744, 64)).astype(np.float32)
w = rng.standard_normal((289, 64)).astype(np.float32)
for name, (a, b) in (("filter gradient", (cols.T, dy)), ("forward", (cols, w))):
    np.matmul(a, b)
    start = time.perf_counter()
    for _ in range(30):
        np.matmul(a, b)
    print(name, (time.perf_counter() - start) / 30 * 1e3)
"""

_STEP = """
import sys, time
sys.path.insert(0, {here!r})
import bench_training
images, labels = bench_training.data(6400)
step = bench_training.simdist_step(images, labels, {replicas}, 64)
for _ in range(10):
    step()
start = time.perf_counter()
for _ in range({steps}):
    step()
print("step", (time.perf_counter() - start) / {steps} * 1e3)
"""

SETTINGS = ("map", "inherit")


def run(program: str, setting: str) -> dict[str, float]:
    env = {**os.environ, "SIMDIST_BLAS_BUFFERS": setting}
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
    )
    return {
        name: float(ms) for name, ms in (line.rsplit(" ", 1) for line in done.stdout.splitlines())
    }


def measure(rounds: int, steps: int) -> dict[tuple[str, str], float]:
    """Median ms of each (what, setting), the settings alternating, one process each."""
    programs = {"products": _PRODUCTS}
    for replicas in (1, 4):
        gpus = "1 virtual GPU" if replicas == 1 else f"{replicas} virtual GPUs"
        programs[gpus] = _STEP.format(here=HERE, replicas=replicas, steps=steps)
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for kind, program in programs.items():
            for setting in SETTINGS:
                for name, ms in run(program, setting).items():
                    what = name if kind == "products" else f"CNN train step, {kind}"
                    samples.setdefault((what, setting), []).append(ms)
    return {key: statistics.median(values) for key, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="processes per setting (median)")
    parser.add_argument("--steps", type=int, default=40, help="timed steps per process")
    parser.add_argument(
        "--busy", type=int, nargs="+", default=[0, 2], help="busy processes beside it, per run"
    )
    args = parser.parse_args()
    for load in args.busy:
        with busy(load):
            ms = measure(args.rounds, args.steps)
        print(
            f"\nOpenBLAS's packing buffers, {label(load)} (median of {args.rounds} fresh "
            "processes per setting, alternating)"
        )
        whats = list(dict.fromkeys(what for what, _ in ms))
        rows = [
            (
                what,
                f"{ms[what, 'map']:.2f}",
                f"{ms[what, 'inherit']:.2f}",
                f"{ms[what, 'inherit'] / ms[what, 'map']:.2f}x",
            )
            for what in whats
        ]
        print_table(("ms", "map (default)", "inherit", "inherit/map"), rows)


if __name__ == "__main__":
    main()
