"""Input splitting rules: how `experimental_distribute_dataset` hands batches to replicas.

A dataset of global batches is a list of arrays whose first dimension is the batch. The
result of distributing it is a list of steps; a step is the list of per-replica batches in
replica order (what one `next(iterator)` returns as a PerReplica).

TF sources read for these rules:
* tensorflow/python/distribute/input_lib.py (`_make_rebatch_fn`): when the dataset's batch
  size B is known statically (`compute_batch_size` finds the `.batch(B)` that made it), the
  dataset is re-batched with `batch_sizes_for_worker(B, ...)` (RebatchDatasetV2); when it
  is unknown (-1) the legacy RebatchDataset splits each batch into num_replicas pieces.
  Each worker's replicas then take the re-batched elements in turn.
* tensorflow/python/data/experimental/ops/distribute.py (`batch_sizes_for_worker`,
  `_LegacyRebatchDataset`, `compute_batch_size`).
* tensorflow/core/kernels/data/experimental/rebatch_dataset_op.cc (both kernels' loops).
* tensorflow/python/distribute/distribute_lib.py (`InputContext.get_per_replica_batch_size`).
* input_lib's partial-batch handling: when the data runs out in the middle of a step, the
  replicas that got nothing receive an empty batch (batch dimension 0) so that the step can
  still run; when no replica gets anything the iteration ends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def get_per_replica_batch_size(global_batch_size: int, num_replicas_in_sync: int) -> int:
    """`InputContext.get_per_replica_batch_size`: the global batch divided by the replicas.

    TF rule (distribute_lib.py): the global batch size must be divisible by the number of
    replicas in sync; otherwise a ValueError whose message is reproduced here.

    Args:
      global_batch_size: the global batch size.
      num_replicas_in_sync: the number of replicas in sync.

    Returns:
      global_batch_size // num_replicas_in_sync.

    Raises:
      ValueError: not divisible.
    """
    if global_batch_size % num_replicas_in_sync != 0:
        raise ValueError(
            f"The `global_batch_size` {global_batch_size!r} is not divisible by "
            f"`num_replicas_in_sync` {num_replicas_in_sync!r} "
        )
    return global_batch_size // num_replicas_in_sync


def batch(elements: Any, batch_size: int, drop_remainder: bool = False) -> list[np.ndarray]:
    """`Dataset.batch`: consecutive groups of `batch_size` elements, in order.

    TF rule: the last group may be smaller (a partial batch) unless `drop_remainder=True`,
    which drops it.

    Args:
      elements: an array-like whose first dimension indexes the elements.
      batch_size: a positive int.
      drop_remainder: drop a last partial batch.

    Returns:
      The list of batches.

    Raises:
      ValueError: batch_size < 1 or scalar `elements`.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    data = np.asarray(elements)
    if data.ndim == 0:
        raise ValueError("elements must have a first (element) dimension, got a scalar")
    n = data.shape[0]
    stop = n - n % batch_size if drop_remainder else n
    return [data[i : min(i + batch_size, stop)] for i in range(0, stop, batch_size)]


def per_replica_batch_sizes(
    global_batch_size: int,
    num_replicas_per_worker: int,
    num_workers: int = 1,
    worker_index: int = 0,
) -> list[int]:
    """The per-replica batch sizes one worker re-batches its global batches into.

    TF rule (`batch_sizes_for_worker`): with N = num_workers * num_replicas_per_worker
    sub-batches of a global batch B, the first B - N*floor(B/N) of them (counted over all
    workers) get ceil(B/N) = floor(B/N) + 1 elements, the rest floor(B/N); worker w's list is
    worker 0's list rotated left by w * num_replicas_per_worker. So 7 over 4 replicas on one
    worker is [2, 2, 2, 1]; 7 over 2 workers x 2 replicas is [2, 2, 2, 1] on worker 0 and
    [2, 1, 2, 2] on worker 1. Every list sums to B over all workers per step, and any two
    sizes differ by at most one. Sizes may be 0 when B < N.

    Args:
      global_batch_size: the declared global batch size B (>= 0).
      num_replicas_per_worker: replicas on each worker (>= 1).
      num_workers: workers (>= 1).
      worker_index: this worker, in [0, num_workers).

    Returns:
      A list of num_workers * num_replicas_per_worker sizes: one cycle of the worker's
      re-batched stream.

    Raises:
      ValueError: a count out of range.
    """
    if num_replicas_per_worker < 1 or num_workers < 1:
        raise ValueError("num_replicas_per_worker and num_workers must be at least 1")
    if not 0 <= worker_index < num_workers:
        raise ValueError(f"worker_index {worker_index} is not in [0, {num_workers})")
    if global_batch_size < 0:
        raise ValueError(f"global_batch_size must be >= 0, got {global_batch_size}")
    # Deal the global batch's elements one at a time to the sub-batches in turn (the first
    # ones get the extra element), then rotate so that this worker's replicas come first.
    sub_batches = num_workers * num_replicas_per_worker
    sizes = [0] * sub_batches
    for element in range(global_batch_size):
        sizes[element % sub_batches] += 1
    first = worker_index * num_replicas_per_worker
    return [sizes[(first + i) % sub_batches] for i in range(sub_batches)]


def _check_batches(batches: Sequence[Any]) -> list[np.ndarray]:
    arrays = [np.asarray(b) for b in batches]
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise ValueError(
                f"batch {i} is a scalar; rebatching needs batched elements (rank >= 1). "
                "Call the `batch` method on the dataset first."
            )
    inner = {a.shape[1:] for a in arrays}
    if len(inner) > 1:
        raise ValueError(f"batches have different element shapes {sorted(inner)}")
    return arrays


def rebatch(
    batches: Sequence[Any], batch_sizes: Sequence[int], drop_remainder: bool = False
) -> list[np.ndarray]:
    """`Dataset.rebatch(batch_sizes)` (RebatchDatasetV2): re-cut the stream of elements.

    TF rule (rebatch_dataset_op.cc, RebatchDatasetV2): output batch k wants
    batch_sizes[k mod len(batch_sizes)] elements and takes them in order from the input
    batches, crossing input-batch boundaries when one runs out (functionally
    `unbatch().batch(n)` with n cycling through `batch_sizes`). When the input ends, a batch
    that got some elements but fewer than wanted is emitted (dropped if `drop_remainder`);
    a wanted size of 0 emits an empty batch (unless the input has already been found
    exhausted); the stream ends at the first output that wants elements and gets none.

    Args:
      batches: the input batches (arrays with a leading batch dimension).
      batch_sizes: the cycle of output sizes (non-negative, not all zero).
      drop_remainder: drop a last output smaller than its wanted size.

    Returns:
      The output batches.

    Raises:
      ValueError: scalar batches, differing element shapes, or bad batch_sizes.
    """
    arrays = _check_batches(batches)
    sizes = [int(s) for s in batch_sizes]
    if not sizes or any(s < 0 for s in sizes) or sum(sizes) == 0:
        raise ValueError(f"batch_sizes must be non-negative and not all zero, got {sizes}")
    inner = arrays[0].shape[1:] if arrays else ()
    dtype = arrays[0].dtype if arrays else np.dtype(np.int64)
    stream = np.concatenate(arrays, axis=0) if arrays else np.zeros((0, *inner), dtype=dtype)
    out: list[np.ndarray] = []
    position = 0
    k = 0
    while True:
        wanted = sizes[k % len(sizes)]
        k += 1
        got = stream[position : position + wanted]
        position += got.shape[0]
        if wanted > 0 and got.shape[0] == 0:
            return out
        if got.shape[0] < wanted:
            # The input ran out while filling this batch: TF marks the end of input here,
            # so this short batch (unless dropped) is the last output, even when the next
            # wanted size is 0.
            if not drop_remainder:
                out.append(got)
            return out
        out.append(got)


def legacy_rebatch(batches: Sequence[Any], num_replicas: int) -> list[np.ndarray]:
    """The legacy RebatchDataset: split each input batch into `num_replicas` pieces.

    TF rule (rebatch_dataset_op.cc, RebatchDatasetOp; used when the dataset's batch size is
    unknown): each input batch of actual size b is cut into num_replicas slices of
    ceil(b / num_replicas) elements, in order; the last slices may be short or empty. So
    6 over 4 is [2, 2, 2, 0] and 5 over 4 is [2, 2, 1, 0]. Input boundaries are kept.

    Args:
      batches: the input batches.
      num_replicas: the number of pieces per batch (>= 1).

    Returns:
      num_replicas outputs per input batch, in order.

    Raises:
      ValueError: num_replicas < 1 or scalar batches.
    """
    if num_replicas < 1:
        raise ValueError("num_replicas must be greater than zero.")
    out = []
    for a in _check_batches(batches):
        b = a.shape[0]
        interval = math.ceil(b / num_replicas)
        for i in range(num_replicas):
            start = min(i * interval, b)
            out.append(a[start : min(start + interval, b)])
    return out


def _empty_like(batch_: np.ndarray) -> np.ndarray:
    return np.zeros((0, *batch_.shape[1:]), dtype=batch_.dtype)


def distribute_batches(
    batches: Sequence[Any], num_replicas: int, declared_batch_size: int | None
) -> list[list[np.ndarray]]:
    """Each step's per-replica batches for `experimental_distribute_dataset` on one worker.

    TF rule (input_lib.py): with the declared global batch size B known, the worker's
    dataset is `rebatch`-ed with `per_replica_batch_sizes(B, num_replicas)`; with B unknown
    (None here, -1 in TF) it is `legacy_rebatch`-ed into num_replicas pieces per batch.
    Replica r takes element s*num_replicas + r of the re-batched stream at step s. When the
    stream ends inside a step, the replicas left without data get an empty batch (shape
    (0, *element_shape), same dtype) and the step still happens; a step in which no
    replica gets an element does not happen. Consequently a short final batch fills the
    replicas in order: with B=4 over 2 replicas, a final batch of 2 gives [x0, x1] and [].

    Args:
      batches: the dataset's global batches, in order.
      num_replicas: replicas on the worker (>= 1).
      declared_batch_size: the `.batch(B)` size, or None when it is unknown.

    Returns:
      A list of steps, each a list of num_replicas arrays.

    Raises:
      ValueError: num_replicas < 1, scalar batches or differing element shapes.
    """
    if num_replicas < 1:
        raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
    arrays = _check_batches(batches)
    if not arrays:
        return []
    if declared_batch_size is None:
        stream = legacy_rebatch(arrays, num_replicas)
    else:
        stream = rebatch(arrays, per_replica_batch_sizes(declared_batch_size, num_replicas))
    steps = []
    for start in range(0, len(stream), num_replicas):
        chunk = stream[start : start + num_replicas]
        chunk += [_empty_like(arrays[0])] * (num_replicas - len(chunk))
        steps.append(chunk)
    return steps


def distribute_dataset(
    elements: Any,
    global_batch_size: int,
    num_replicas: int,
    drop_remainder: bool = False,
    auto_shard_policy: str = "AUTO",
) -> list[list[np.ndarray]]:
    """`.batch(global_batch_size, drop_remainder)` distributed over one worker's replicas.

    TF rule (input_lib.py + auto_shard.cc, checked against TF 2.21 on 4 logical CPUs): the
    dataset is auto-sharded even with one worker unless the policy is OFF. Under AUTO (on an
    in-memory source) and DATA, sharding by data rewrites the declared-size rebatch into the
    legacy one, so each actual global batch is split into `num_replicas` slices of
    ceil(b / num_replicas) (`legacy_rebatch`). Under OFF the declared-size rebatch
    (`distribute_batches`) re-cuts the element stream by the declared global batch size.

    The API page's example: range(4).batch(2) over 2 replicas gives steps [[0], [1]] and
    [[2], [3]] (then `x * 2` makes the printed [0], [2] and [4], [6]).

    Args:
      elements: array-like of elements (first dimension indexes them).
      global_batch_size: the declared global batch size.
      num_replicas: replicas on the worker.
      drop_remainder: drop the dataset's last partial global batch.
      auto_shard_policy: "AUTO", "DATA" or "OFF" (one worker, in-memory data).

    Returns:
      A list of steps, each a list of num_replicas arrays.

    Example (10 elements, global batch 7, 4 replicas):
      >>> [[b.tolist() for b in step] for step in distribute_dataset(np.arange(10), 7, 4)]
      [[[0, 1], [2, 3], [4, 5], [6]], [[7], [8], [9], []]]
      >>> steps = distribute_dataset(np.arange(10), 7, 4, auto_shard_policy="OFF")
      >>> [[b.tolist() for b in step] for step in steps]
      [[[0, 1], [2, 3], [4, 5], [6]], [[7, 8], [9], [], []]]
    """
    policy = auto_shard_policy.upper()
    if policy not in ("AUTO", "DATA", "OFF"):
        raise ValueError(f"auto_shard_policy must be AUTO, DATA or OFF, got {auto_shard_policy!r}.")
    batches = batch(elements, global_batch_size, drop_remainder)
    if policy == "OFF":
        return distribute_batches(batches, num_replicas, global_batch_size)
    pieces = legacy_rebatch(batches, num_replicas) if batches else []
    return [pieces[i : i + num_replicas] for i in range(0, len(pieces), num_replicas)]


def distribute_batch_sizes(
    global_batch_sizes: Sequence[int], num_replicas: int, declared_batch_size: int | None
) -> list[list[int]]:
    """`distribute_batches` on sizes only: each step's per-replica batch sizes.

    Args:
      global_batch_sizes: the sizes of the dataset's global batches, in order.
      num_replicas: replicas on the worker.
      declared_batch_size: the `.batch(B)` size, or None when unknown.

    Returns:
      A list of steps, each a list of num_replicas sizes.
    """
    total = 0
    batches = []
    for size in global_batch_sizes:
        batches.append(np.arange(total, total + size))
        total += size
    steps = distribute_batches(batches, num_replicas, declared_batch_size)
    return [[int(b.shape[0]) for b in step] for step in steps]
