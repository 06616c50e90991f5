"""Time several contenders in turns, in one run: ratios that hold on a noisy machine.

A shared machine's speed drifts from second to second; timing A for a minute and then B
for a minute compares two different machines. ``side_by_side`` runs one block of each
contender in turn, many rounds over, and keeps each one's median block: the ratio of two
medians then compares the same minutes.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable


def side_by_side(
    contenders: dict[str, Callable[[], None]], rounds: int, per_block: int
) -> dict[str, float]:
    """Median milliseconds per call of each contender, from ``rounds`` alternating blocks of
    ``per_block`` calls (each contender is called once, untimed, before the first round).

    What one contender leaves behind falls on the block after it: beside two busy processes
    the simdist block that followed TensorFlow's 4-device block ran 20-30 ms a step slower
    than its twins (the tutorial CNN, 2026-12-02), and a fixed order put the same contender
    there every round. So each round runs the contenders in a fresh order, seeded (the same
    orders every run): a contender follows each of the others about equally often, and the
    median drops the rounds it drew the bad place.
    """
    if rounds < 1 or per_block < 1:
        raise ValueError(f"rounds and per_block must be >= 1, got {rounds} and {per_block}")
    for fn in contenders.values():
        fn()
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for k in range(rounds):
        for name in random.Random(k).sample(names, len(names)):
            fn = contenders[name]
            start = time.perf_counter()
            for _ in range(per_block):
                fn()
            samples[name].append((time.perf_counter() - start) * 1000 / per_block)
    return {name: statistics.median(values) for name, values in samples.items()}


def print_table(header: tuple[str, ...], rows: list[tuple]) -> None:
    """Rows as aligned columns (the first left-aligned, the others right-aligned)."""
    cells = [tuple(str(c) for c in row) for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
