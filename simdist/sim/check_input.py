"""The input check: pipelines that give replicas the same examples, uneven or empty
batches, and shuffles that differ per worker.

:func:`input_findings` reads what each replica received at each step (the examples
themselves, in global replica order) and finds:

* **same examples**: two replicas received identical batches at a step. On several workers
  this is a pipeline that is not sharded (``AutoShardPolicy.OFF`` without a manual
  ``shard``, or a ``distribute_datasets_from_function`` pipeline that ignores its
  ``input_context``): every worker trains on the same data.
* **shuffles that differ per worker**: workers received some of the same examples, though
  no two batches are identical. Sharding by position after a shuffle only splits the data
  when every worker shuffles in the same order; give all workers the same shuffle seed.
  (Data that itself holds repeated examples also shows here; the finding says so.)
* **uneven or empty batches**: at a step the replicas' batch sizes differ (a partial last
  batch) or a replica got nothing. Legal, but it changes the result of any loss that is
  not divided by the *global* batch size; the finding names the step and the sizes.

:func:`check_input` runs a user's dataset through the real distribution on a virtual
W x L cluster (the machinery of ``simdist explain-input``) and reports these findings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

__all__ = ["InputFinding", "InputReport", "input_findings", "check_input"]


@dataclasses.dataclass(frozen=True)
class InputFinding:
    """One finding: ``kind`` (``"same_examples"``, ``"shuffle_differs"``, ``"uneven"``,
    ``"empty"``), the first step it shows at, whether it makes the replicated run train
    on other data than intended (``difference``) or is a warning, and the message."""

    kind: str
    step: int
    difference: bool
    message: str


@dataclasses.dataclass(frozen=True)
class InputReport:
    """The findings of :func:`check_input` (``str`` it for the text)."""

    findings: tuple[InputFinding, ...]
    title: str

    @property
    def ok(self) -> bool:
        return not any(f.difference for f in self.findings)

    def __str__(self) -> str:
        lines = [self.title]
        if not self.findings:
            lines.append("input: every replica got its own examples; batches even")
        lines += [
            f"input {'problem' if f.difference else 'warning'}: {f.message}" for f in self.findings
        ]
        return "\n".join(lines)


def _varied(batch: np.ndarray) -> bool:
    """More than one distinct example in the batch (identical batches of one repeated
    example say nothing about sharding)."""
    return len(set(_rows(batch))) > 1


def _rows(batch: np.ndarray) -> list[bytes]:
    if batch.ndim == 0 or len(batch) == 0:
        return []
    flat = np.ascontiguousarray(batch).reshape(len(batch), -1)
    return [row.tobytes() for row in flat]


def input_findings(
    steps: Sequence[Sequence[np.ndarray | None]], workers: Sequence[int]
) -> list[InputFinding]:
    """Findings over ``steps[s][r]``: the features replica ``r`` (global order) got at step
    ``s`` (None: no array input); ``workers[r]``: the worker replica ``r`` runs on."""
    findings: list[InputFinding] = []
    num_workers = len(set(workers))
    same_at = None
    pairs: set[tuple[int, int]] = set()
    seen: dict[bytes, set[int]] = {}
    uneven_seen: set[tuple[int, ...]] = set()
    for s, batches in enumerate(steps):
        arrays = [None if b is None else np.asarray(b) for b in batches]
        if any(a is None or a.ndim == 0 for a in arrays):
            continue
        sizes = [len(a) for a in arrays]
        if (len(set(sizes)) > 1 or 0 in sizes) and tuple(sizes) not in uneven_seen:
            uneven_seen.add(tuple(sizes))  # the same split again says nothing new
            kind = "empty" if 0 in sizes else "uneven"
            empty = [r for r, n in enumerate(sizes) if n == 0]
            extra = f"; replica(s) {', '.join(map(str, empty))} get an empty batch" if empty else ""
            findings.append(
                InputFinding(
                    kind,
                    s,
                    False,
                    f"step {s}: replica batch sizes {', '.join(map(str, sizes))} (global "
                    f"{sum(sizes)}, not {len(sizes)} equal parts){extra}. A loss divided by "
                    "the per-replica batch (or compute_average_loss without "
                    "global_batch_size) weighs these examples differently; use "
                    "drop_remainder=True if you did not expect a partial batch.",
                )
            )
        for r in range(len(arrays)):
            for q in range(r + 1, len(arrays)):
                a, b = arrays[r], arrays[q]
                if a.size and a.shape == b.shape and np.array_equal(a, b) and _varied(a):
                    pairs.add((r, q))
                    same_at = s if same_at is None else same_at
        for r, a in enumerate(arrays):
            for row in _rows(a):
                seen.setdefault(row, []).append(workers[r])
    if pairs:
        across = any(workers[r] != workers[q] for r, q in pairs)
        shown = ", ".join(f"{r}={q}" for r, q in sorted(pairs)[:6])
        where = (
            "every worker reads the whole dataset: it is not sharded (auto-shard policy OFF "
            "without dataset.shard(num_workers, worker_index), or a dataset_fn that ignores "
            "input_context). Shard it, or leave the policy at AUTO/DATA"
            if across
            else "the replicas of one worker got the same batch (a pipeline that repeats "
            "each element per replica, or a per-replica dataset_fn that ignores "
            "input_context)"
        )
        findings.append(
            InputFinding(
                "same_examples",
                same_at,
                True,
                f"step {same_at}: replicas got identical examples (replica pairs {shown}): "
                f"{where}.",
            )
        )
    elif num_workers > 1:
        # an example seen once on each of several workers (repeated data is left out)
        shared = sum(
            1
            for owners in seen.values()
            if len(set(owners)) > 1 and len(owners) == len(set(owners))
        )
        if shared:
            findings.append(
                InputFinding(
                    "shuffle_differs",
                    0,
                    True,
                    f"{shared} example(s) reached more than one worker in the steps checked, "
                    "though no two batches are equal: the workers shuffle in different orders "
                    "(a shuffle seed that depends on the worker, or no seed), so sharding "
                    "after the shuffle picks overlapping examples. Give every worker the same "
                    "shuffle seed (shuffle(buffer, seed=...)), or shard before shuffling. "
                    "(If your data holds repeated examples, this can be them.)",
                )
            )
    return findings


def _first_leaf(dataset):
    from simdist.core import nest

    def first(*element):
        return nest.flatten(element)[0]

    return dataset.map(first)


def check_input(dataset, workers: int = 1, devices_per_worker: int = 2, steps: int | None = None):
    """Distribute ``dataset`` (already batched with the global batch) over a virtual
    ``workers`` x ``devices_per_worker`` cluster and report the findings.

    Args:
        dataset: a ``tf.data.Dataset`` of global batches, with its options (auto-shard
            policy) as the training program builds it. For a tuple element the first
            component (the features) is compared.
        workers, devices_per_worker: the cluster's shape.
        steps: check only the first ``steps`` global batches (needed for a ``repeat()``-ed
            dataset).

    Returns:
        An :class:`InputReport`.

    Raises:
        ValueError: counts below 1, or an infinite dataset without ``steps``.
    """
    from simdist.data.dataset import INFINITE
    from simdist.distribute.explain_input import run_input_cluster

    if workers < 1 or devices_per_worker < 1:
        raise ValueError(
            f"workers and devices_per_worker must be >= 1, got {workers} and {devices_per_worker}."
        )
    if steps is not None:
        dataset = dataset.take(steps)
    elif dataset._cardinality() == INFINITE:
        raise ValueError(
            "The dataset is infinite (repeat() without a count); pass steps= to check its "
            "first global batches."
        )
    values, _ = run_input_cluster(_first_leaf(dataset), workers, devices_per_worker)
    per_step = [[b for worker in step for b in worker] for step in values]
    owners = [w for w in range(workers) for _ in range(devices_per_worker)]
    title = f"input check: {workers} worker(s) x {devices_per_worker} replicas, {len(values)} steps"
    return InputReport(tuple(input_findings(per_step, owners)), title)
