"""Collective rules: all-reduce, gather/all-gather (and TPU's stricter gather), broadcast.

A per-replica value is a list of arrays, one per replica, in replica order; a replicated
result is a list of N equal, independent arrays.

TF sources read for these rules: tensorflow/python/distribute/distribute_lib.py
(`Strategy.gather`, `ReplicaContext.all_reduce`, `ReplicaContext.all_gather` and their
docstrings), cross_device_ops.py (gather = concatenation along the axis in replica order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from simdist_reference.reduce import _as_arrays, reduce


def all_reduce(op: Any, per_replica: Sequence[Any]) -> list[np.ndarray]:
    """Reduces across replicas and gives every replica the result (`ReplicaContext.all_reduce`).

    TF rule: every replica receives the element-wise SUM (or MEAN) of all replicas' values;
    the values must have the same shape. The API page's example: replicas holding their
    replica ids 0 and 1 both get 1 from `all_reduce("sum", ...)`.

    Args:
      op: "SUM" or "MEAN" (any case) or an enum-like with `.name`.
      per_replica: list of equally shaped array-likes, in replica order.

    Returns:
      A list with one copy of the reduced value per replica (float64 for floats/MEAN,
      int64 for SUM of integers).

    Raises:
      ValueError: unknown op or shapes that differ.
    """
    result = reduce(op, per_replica, axis=None)
    return [result.copy() for _ in per_replica]


def _check_gather_inputs(arrays: list[np.ndarray], axis: int, api: str) -> int:
    """Validates ranks, dtypes and the axis; returns the axis made non-negative."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{api}: axis must be an int, got {axis!r}")
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise ValueError(
                f"{api}: the value on replica {i} is a scalar (rank 0); gather needs "
                "non-zero rank. Use tf.expand_dims(value, 0) before gathering."
            )
    ranks = {a.ndim for a in arrays}
    if len(ranks) != 1:
        raise ValueError(
            f"{api}: the values on the replicas have different ranks {sorted(ranks)}; "
            "all must have the same rank"
        )
    rank = ranks.pop()
    if axis < -rank or axis >= rank:
        raise ValueError(f"{api}: axis {axis} is out of range for values of rank {rank}")
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) != 1:
        raise TypeError(
            f"{api}: the values on the replicas have different dtypes "
            f"{sorted(str(d) for d in dtypes)}; cast them to one dtype first"
        )
    return int(axis) % rank


def gather(per_replica: Sequence[Any], axis: int) -> np.ndarray:
    """Concatenates the replicas' values along `axis` in replica order (`Strategy.gather`).

    TF rules (the API page's `gather` section): the values on the replicas must have the
    same rank and the same shape in every dimension except `axis` (shapes (1, 2, 3) and
    (1, 3, 3) may be gathered along axis 1 but not along 0 or 2). Components must have
    non-zero rank: for scalars, expand_dims first. The result's `axis` dimension is the sum
    of the replicas' sizes there; replica 0's slice comes first. Dtype is preserved.

    Args:
      per_replica: list of array-likes, one per replica, in replica order.
      axis: the dimension to concatenate along; negative counts from the end.

    Returns:
      The concatenation (same dtype as the inputs).

    Raises:
      ValueError: a scalar component, ranks that differ, axis out of range, or shapes that
        differ outside `axis`.
      TypeError: dtypes that differ, or a non-integer axis.

    Example (2 replicas each holding [[1], [2]]):
      >>> gather([np.array([[1], [2]]), np.array([[1], [2]])], axis=0).tolist()
      [[1], [2], [1], [2]]
    """
    arrays = _as_arrays(per_replica)
    ax = _check_gather_inputs(arrays, axis, "gather")
    rest = {a.shape[:ax] + a.shape[ax + 1 :] for a in arrays}
    if len(rest) != 1:
        shapes = [a.shape for a in arrays]
        raise ValueError(
            f"gather: the replicas' shapes {shapes} differ outside axis {axis}; "
            "they may differ only along the gathered axis"
        )
    return np.concatenate(arrays, axis=ax)


def all_gather(per_replica: Sequence[Any], axis: int) -> list[np.ndarray]:
    """Gathers along `axis` and gives every replica the result (`ReplicaContext.all_gather`).

    TF rule: same shape requirements and result as `gather`, delivered to every replica.

    Args:
      per_replica: list of array-likes, one per replica, in replica order.
      axis: the dimension to concatenate along.

    Returns:
      A list with one copy of the concatenation per replica.

    Raises:
      ValueError, TypeError: as `gather`.
    """
    result = gather(per_replica, axis)
    return [result.copy() for _ in per_replica]


def gather_tpu(per_replica: Sequence[Any], axis: int) -> np.ndarray:
    """`TPUStrategy.gather`: like `gather`, but every replica's shape must be identical.

    TF rule (the API page's note on `gather`): for TPUStrategy all tensors must have
    exactly the same rank and the same shape, including along `axis`.

    Args:
      per_replica: list of array-likes, one per replica, in replica order.
      axis: the dimension to concatenate along.

    Returns:
      The concatenation.

    Raises:
      ValueError: shapes that are not identical, plus everything `gather` rejects.
    """
    arrays = _as_arrays(per_replica)
    _check_gather_inputs(arrays, axis, "gather_tpu")
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(
            f"gather_tpu: TPUStrategy needs identical shapes on every replica, got "
            f"{[a.shape for a in arrays]}; pad the values to one shape first"
        )
    return gather(arrays, axis)


def broadcast(value: Any, num_replicas: int) -> list[np.ndarray]:
    """Gives every replica a copy of one value (what a Mirrored value holds).

    Args:
      value: an array-like.
      num_replicas: how many replicas (>= 1).

    Returns:
      A list of `num_replicas` independent copies.

    Raises:
      ValueError: `num_replicas` < 1.
    """
    if num_replicas < 1:
        raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
    array = np.asarray(value)
    return [array.copy() for _ in range(num_replicas)]


def split_along(value: Any, sizes: Sequence[int], axis: int = 0) -> list[np.ndarray]:
    """Splits an array into consecutive pieces of the given sizes along `axis`.

    The inverse of `gather`: `gather(split_along(x, sizes, axis), axis)` equals `x`.

    Args:
      value: an array-like of rank >= 1.
      sizes: non-negative piece sizes summing to `value.shape[axis]`.
      axis: the dimension to split.

    Returns:
      The pieces, in order.

    Raises:
      ValueError: sizes that are negative or do not add up.
    """
    array = np.asarray(value)
    if any(s < 0 for s in sizes) or sum(sizes) != array.shape[axis]:
        raise ValueError(f"sizes {list(sizes)} must be non-negative and sum to {array.shape[axis]}")
    bounds = np.cumsum([0, *sizes])
    return [
        np.take(array, np.arange(bounds[i], bounds[i + 1]), axis=axis) for i in range(len(sizes))
    ]
