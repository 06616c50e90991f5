"""Benchmark: collective arithmetic and schedule building (the pricing half comes later).

Rows (median of several repeats after a warm-up; the machine is shared and noisy):

* ring all-reduce arithmetic, 8 ranks x 16 Mi float32, against one ``np.sum`` over the
  stacked arrays (goal: within 3x), into reused buffers and into fresh arrays;
* the reproducible (exact) all-reduce against the plain ring, 8 ranks x 1 Mi float32 (the
  cost of reproducible mode; no goal, reported);
* building the schedule of a 1 GiB ring_per_dimension all-reduce on a 16x16x16 torus
  (4096 ranks; the pricer adds its own time on top, goal for both: under 1 s).

    python scenarios/bench_collectives.py [--repeats 5]

Each ``bench_*`` function returns one row; the cost-model half appends its own rows.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from simdist.collectives import execute, schedule


def median_ms(fn, repeats: int) -> float:
    fn()  # warm up (first-touch page faults, plan cache)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def bench_ring_arithmetic(repeats: int, ranks: int = 8, elems: int = 16 * 2**20) -> list[dict]:
    """Ring all-reduce arithmetic vs one np.sum over the stacked arrays.

    Two rows: writing into reused per-rank buffers (``out=``: the arithmetic alone, the
    goal's measure) and allocating 8 fresh result arrays (adds first-touch page faults of
    8 x 64 MiB, which one np.sum's single 64 MiB output does not pay).
    """
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(elems, dtype=np.float32) for _ in range(ranks)]
    stacked = np.stack(arrays)
    base = median_ms(lambda: np.sum(stacked, axis=0), repeats)
    ring = median_ms(lambda: execute("all_reduce", "ring", arrays), repeats)
    out = [np.empty_like(a) for a in arrays]
    into = median_ms(lambda: execute("all_reduce", "ring", arrays, out=out), repeats)
    label = f"{ranks} x {elems // 2**20} Mi f32"
    return [
        {
            "row": f"ring all-reduce {label}, out= buffers",
            "ms": into,
            "baseline": f"np.sum {base:.1f} ms",
            "ratio": into / base,
            "goal": "<= 3x",
        },
        {
            "row": f"ring all-reduce {label}, fresh outputs",
            "ms": ring,
            "baseline": f"np.sum {base:.1f} ms",
            "ratio": ring / base,
            "goal": "(8 new 64 MiB arrays)",
        },
    ]


def bench_reproducible(repeats: int, ranks: int = 8, elems: int = 2**20) -> dict:
    """Reproducible (exact, correctly rounded) all-reduce vs the plain ring."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(elems, dtype=np.float32) for _ in range(ranks)]
    plain = median_ms(lambda: execute("all_reduce", "ring", arrays), repeats)
    exact = median_ms(lambda: execute("all_reduce", "ring", arrays, reproducible=True), repeats)
    return {
        "row": f"reproducible all-reduce {ranks} x {elems // 2**20} Mi f32",
        "ms": exact,
        "baseline": f"plain ring {plain:.1f} ms",
        "ratio": exact / plain,
        "goal": "(reported)",
    }


def bench_torus_schedule(repeats: int, dims: tuple[int, ...] = (16, 16, 16)) -> dict:
    """Building a 1 GiB ring_per_dimension all-reduce schedule on a 4096-chip torus."""
    ranks = int(np.prod(dims))

    def build():
        from simdist.collectives.algorithms import build_plan

        build_plan.cache_clear()
        schedule("all_reduce", "ring_per_dimension", ranks, 2**30, torus_dims=dims, itemsize=4)

    ms = median_ms(build, max(1, repeats // 2))
    return {
        "row": f"schedule 1 GiB all-reduce, {'x'.join(map(str, dims))} torus",
        "ms": ms,
        "baseline": "-",
        "ratio": float("nan"),
        "goal": "< 1000 ms with pricing",
    }


def print_rows(rows: list[dict]) -> None:
    print(f"{'benchmark':<44} {'ms':>9} {'baseline':>22} {'ratio':>7}  goal")
    for r in rows:
        ratio = "" if r["ratio"] != r["ratio"] else f"{r['ratio']:.2f}x"
        print(f"{r['row']:<44} {r['ms']:>9.1f} {r['baseline']:>22} {ratio:>7}  {r['goal']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = [
        *bench_ring_arithmetic(args.repeats),
        bench_reproducible(args.repeats),
        bench_torus_schedule(args.repeats),
    ]
    print_rows(rows)


if __name__ == "__main__":
    main()
