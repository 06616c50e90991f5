"""Input across workers: which elements each worker and replica gets at each step.

The oracle for `experimental_distribute_dataset` on W workers x L local replicas, for a
dataset `source.batch(G, drop_remainder)` whose source is either in-memory elements or
the lines of several files (`TextLineDataset(files)`). A result is a list of steps; a
step is a list of W workers; a worker is a list of L per-replica batches (arrays).

TF sources read for these rules (checked against TF 2.21 by emulating each worker's
pipeline in one process: `rebatch` as input_lib's `_make_rebatch_fn`, then
`input_ops.auto_shard_dataset(dataset, W, w, W * L)`):
* tensorflow/core/grappler/optimizers/data/auto_shard.cc: FILE shards the file names
  (worker w reads files w, w+W, ...); DATA puts a shard(W, w) after the re-batching, which
  it turns into the legacy split of every global batch into W*L slices; AUTO is FILE when
  the pipeline reads files and DATA otherwise; OFF changes nothing; FILE with one worker
  changes nothing.
* tensorflow/core/kernels/data/shard_dataset_op.cc (`require_non_empty`): with fewer
  files than workers, workers w < files fail at their first element ("the dataset only has
  w+1 file(s)"), workers w >= files get nothing.
* tensorflow/python/distribute/input_lib.py: under FILE and OFF each worker re-cuts its
  own stream with `batch_sizes_for_worker(G, W, L, w)`; the worker's replicas take
  consecutive pieces; a step happens while any replica of any worker has data, and the
  replicas without data get an empty batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from simdist_reference.batching import batch, legacy_rebatch, per_replica_batch_sizes, rebatch

POLICIES = ("AUTO", "FILE", "DATA", "OFF")


class FileShardError(ValueError):
    """A worker cannot get a file of its own (fewer files than workers)."""


class NoFileToShardError(LookupError):
    """Policy FILE on a dataset that reads no files, with several workers."""


def files_for_worker(num_files: int, num_workers: int, worker_index: int) -> list[int]:
    """The file indices worker `worker_index` reads under FILE sharding, in order.

    TF rule: a shard of the file names; with fewer files than workers, the workers that
    would get a file fail instead (TF's require_non_empty shard), the others get none.

    >>> files_for_worker(5, 2, 1)
    [1, 3]

    Raises:
      FileShardError: num_files < num_workers and worker_index < num_files.
    """
    if 0 < num_files < num_workers and worker_index < num_files:
        raise FileShardError(
            f"Could not apply FILE based sharding: the dataset only has {worker_index + 1} "
            f"file(s), which is not enough for the required {num_workers} shards/workers."
        )
    return list(range(worker_index, num_files, num_workers))


def applied_policy(policy: str, reads_files: bool, num_workers: int) -> str:
    """The policy TF applies: AUTO -> FILE on files, DATA otherwise.

    Raises:
      NoFileToShardError: FILE with several workers on a dataset without files.
      ValueError: an unknown policy name.
    """
    policy = policy.upper()
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if policy == "AUTO":
        return "FILE" if reads_files else "DATA"
    if policy == "FILE" and not reads_files and num_workers > 1:
        raise NoFileToShardError("FILE sharding needs a dataset that reads files")
    return policy


def worker_pieces(
    source: Sequence[np.ndarray],
    global_batch_size: int,
    num_workers: int,
    replicas_per_worker: int,
    worker_index: int,
    policy: str,
    drop_remainder: bool,
) -> list[np.ndarray]:
    """One worker's stream of per-replica batches (its replicas take them in turn).

    Args:
      source: the worker's data before batching: one array per file (FILE: only its own
        files) or a single array of in-memory elements.
      global_batch_size: G of `.batch(G)`.
      num_workers, replicas_per_worker, worker_index: the cluster and this worker.
      policy: the applied policy (FILE, DATA or OFF).
      drop_remainder: of `.batch`.

    Returns:
      The per-replica batches, in the order the worker hands them out.
    """
    parts = [np.asarray(p) for p in source]
    data = np.concatenate(parts) if parts else np.zeros((0,), dtype=np.int64)
    batches = batch(data, global_batch_size, drop_remainder)
    total = num_workers * replicas_per_worker
    if total == 1:
        return batches
    if policy == "DATA":
        return legacy_rebatch(batches, total)[worker_index::num_workers]
    sizes = per_replica_batch_sizes(
        global_batch_size, replicas_per_worker, num_workers, worker_index
    )
    # Even on empty input, leading sizes of 0 each emit an empty batch before the input is
    # found exhausted (TF 2.21: range(0).batch(1), OFF, 2 workers -> worker 1 gets one []).
    return rebatch(batches, sizes) if batches else rebatch([data[:0]], sizes)


def distribute_across_workers(
    global_batch_size: int,
    num_workers: int,
    replicas_per_worker: int,
    *,
    elements: Any = None,
    file_lines: Sequence[Any] | None = None,
    policy: str = "AUTO",
    drop_remainder: bool = False,
) -> list[list[list[np.ndarray]]]:
    """Every step of `experimental_distribute_dataset` over a W x L cluster.

    Give either `elements` (an in-memory source) or `file_lines` (one array of lines per
    file, read in file order). A step exists while some replica of some worker has data;
    the others get an empty batch of the same dtype and element shape.

    >>> steps = distribute_across_workers(4, 2, 1, elements=np.arange(10))
    >>> [[w[0].tolist() for w in step] for step in steps]
    [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8], [9]]]

    Raises:
      FileShardError: FILE sharding with fewer files than workers.
      NoFileToShardError: FILE on in-memory elements with several workers.
      ValueError: both or neither of `elements` and `file_lines`; bad counts.
    """
    if (elements is None) == (file_lines is None):
        raise ValueError("give exactly one of `elements` and `file_lines`")
    if global_batch_size < 1 or num_workers < 1 or replicas_per_worker < 1:
        raise ValueError("global_batch_size, num_workers and replicas_per_worker must be >= 1")
    reads_files = file_lines is not None
    applied = applied_policy(policy, reads_files, num_workers)
    files = [np.asarray(f) for f in file_lines] if reads_files else [np.asarray(elements)]
    streams = []
    for w in range(num_workers):
        if applied == "FILE" and num_workers > 1:
            own = [files[i] for i in files_for_worker(len(files), num_workers, w)]
        else:
            own = files
        streams.append(
            worker_pieces(
                own,
                global_batch_size,
                num_workers,
                replicas_per_worker,
                w,
                applied,
                drop_remainder,
            )
        )
    template = np.concatenate(files) if files else np.zeros((0,), dtype=np.int64)
    empty = template[:0]
    num_steps = max(-(-len(s) // replicas_per_worker) for s in streams)
    steps = []
    for k in range(num_steps):
        step = []
        for stream in streams:
            got = stream[k * replicas_per_worker : (k + 1) * replicas_per_worker]
            step.append(list(got) + [empty] * (replicas_per_worker - len(got)))
        steps.append(step)
    return steps


def elements_by_worker(steps: list[list[list[np.ndarray]]]) -> list[list]:
    """All elements each worker received, in the order received."""
    if not steps:
        return []
    return [
        [x for step in steps for piece in step[w] for x in piece.tolist()]
        for w in range(len(steps[0]))
    ]
