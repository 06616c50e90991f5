"""Benchmark: the cost model's pricing speed (issue 4's pricing half of the benchmarks).

Goal: pricing one 1 GiB all-reduce (ring_per_dimension) on a 4096-chip 3D torus (TPU v4,
``v4-8192`` = 4096 chips of 2 TensorCores, 16x16x16) takes under 1 s, routing included. Also
prints the planning and pricing time of a few other presets. ``pricing_rows()`` returns the
rows so that ``scenarios/bench_collectives.py`` can merge them with its arithmetic half.

    python scenarios/bench_cost.py
"""

from __future__ import annotations

import time


def pricing_rows() -> list[dict]:
    """Time planning + pricing of 1 GiB all-reduces; one dict per case.

    Each row: ``case``, ``ranks``, ``algorithm``, ``plan_s`` (building the schedule, by
    ``simdist.collectives``), ``seconds`` (pricing it: the first, cold call, routes not yet
    cached), ``predicted_ms`` and ``goal_s`` (the goal for plan + price; None where none).
    """
    from simdist.collectives.api import schedule
    from simdist.cost import price
    from simdist.topology import get_topology

    cases = [
        ("v4-8192", "ring_per_dimension", 1.0),
        ("dgx-h100", "ring", None),
        ("h100-cluster:16:8", "hierarchical", None),
    ]
    rows = []
    for name, algorithm, goal in cases:
        topology = get_topology(name)
        start = time.perf_counter()
        plan = schedule(
            "all_reduce", algorithm, topology.num_devices, 2**30, topology=topology, itemsize=4
        )
        planned = time.perf_counter()
        cost = price(plan, topology)
        priced = time.perf_counter()
        rows.append(
            {
                "case": name,
                "ranks": topology.num_devices,
                "algorithm": cost.algorithm,
                "plan_s": planned - start,
                "seconds": priced - planned,
                "predicted_ms": cost.time * 1e3,
                "goal_s": goal,
            }
        )
    return rows


def main() -> None:
    print(
        f"{'case':<20} {'ranks':>6} {'algorithm':<20} {'plan s':>7} {'price s':>8} "
        f"{'pred. ms':>9}  goal (plan + price)"
    )
    for row in pricing_rows():
        verdict = (
            ""
            if row["goal_s"] is None
            else (
                f"< {row['goal_s']} s: "
                f"{'ok' if row['plan_s'] + row['seconds'] < row['goal_s'] else 'MISSED'}"
            )
        )
        print(
            f"{row['case']:<20} {row['ranks']:>6} {row['algorithm']:<20} "
            f"{row['plan_s']:>7.3f} {row['seconds']:>8.3f} {row['predicted_ms']:>9.3f}  "
            f"{verdict}"
        )


if __name__ == "__main__":
    main()
