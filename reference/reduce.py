"""Cross-replica reduction rules: `Strategy.reduce` with and without an axis.

A per-replica value is a list of arrays, one per replica, in replica order. Arithmetic is
done in float64 for floating inputs (complex128 for complex ones) and exactly in int64 for
integer/boolean inputs under SUM; MEAN always divides in floating point. Implementations
are compared with these results by value, not by dtype.

TF sources read for these rules: tensorflow/python/distribute/distribute_lib.py
(`StrategyBase.reduce`), reduce_util.py (`ReduceOp`), cross_device_ops.py
(`reduce_non_distributed_value`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

REDUCE_OPS = ("SUM", "MEAN")


def reduce_op_name(op: Any) -> str:
    """Returns the canonical name ("SUM" or "MEAN") of a reduce op.

    TF rule (reduce_util.py, distribute_lib.py): `ReduceOp` is an enum whose members are
    SUM and MEAN; `Strategy.reduce` also accepts a string and upper-cases it before looking
    it up, so "sum", "Sum" and "SUM" all mean SUM. An unknown name fails the enum lookup.

    Args:
      op: a string (any case) or an enum-like object with a `.name` attribute.

    Returns:
      "SUM" or "MEAN".

    Raises:
      ValueError: `op` names no reduce op.
      TypeError: `op` is neither a string nor has a `.name`.
    """
    if isinstance(op, str):
        name = op.upper()
    elif hasattr(op, "name") and isinstance(op.name, str):
        name = op.name.upper()
    else:
        raise TypeError(
            f"reduce op must be a string or a ReduceOp, got {op!r} of type "
            f"{type(op).__name__}; use 'SUM' or 'MEAN'"
        )
    if name not in REDUCE_OPS:
        raise ValueError(f"{op!r} is not a valid ReduceOp; use 'SUM' or 'MEAN'")
    return name


def _as_arrays(per_replica: Sequence[Any]) -> list[np.ndarray]:
    if isinstance(per_replica, np.ndarray) or not isinstance(per_replica, (list, tuple)):
        raise TypeError(
            "a per-replica value is a list of arrays in replica order, got "
            f"{type(per_replica).__name__}"
        )
    if len(per_replica) == 0:
        raise ValueError("a per-replica value needs at least one replica, got an empty list")
    return [np.asarray(v) for v in per_replica]


def _accumulation_dtype(arrays: Sequence[np.ndarray]) -> np.dtype:
    """int64 for integer/bool inputs, complex128 for complex, float64 otherwise."""
    kinds = {a.dtype.kind for a in arrays}
    if kinds <= {"b", "i", "u"}:
        return np.dtype(np.int64)
    if "c" in kinds:
        return np.dtype(np.complex128)
    return np.dtype(np.float64)


def _float_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex128) if dtype.kind == "c" else np.dtype(np.float64)


def sum_in_replica_order(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Adds arrays left to right (replica 0 first) in the accumulation dtype.

    Args:
      arrays: equally shaped arrays.

    Returns:
      Their element-wise sum, int64 for integers, float64 (complex128) otherwise.
    """
    dtype = _accumulation_dtype(arrays)
    total = np.zeros(arrays[0].shape, dtype=dtype)
    for a in arrays:
        total = np.asarray(total + a.astype(dtype))
    return total


def _normalize_axes(axis: int | Sequence[int], rank: int) -> tuple[int, ...]:
    """TF accepts negative axes like tf.math.reduce_*; out of range is a ValueError."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if isinstance(axis, bool) or not all(
        isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in axes
    ):
        raise TypeError(f"Expected `axis` to be an integer, tuple or list not: {axis!r}")
    out = []
    for a in axes:
        if a < -rank or a >= rank:
            raise ValueError(f"`axis` = {a!r} out of range for `value` with rank {rank}")
        out.append(int(a) % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"`axis` = {axis!r} names the same dimension twice")
    return tuple(sorted(out))


def reduce(
    op: Any, per_replica: Sequence[Any], axis: int | Sequence[int] | None = None
) -> np.ndarray:
    """Reduces a per-replica value across replicas, as `Strategy.reduce` does.

    TF rules (distribute_lib.py `StrategyBase.reduce`, and the API page's "What should axis
    be?" section):

    * `axis=None`: reduce across replicas only, element-wise. Every replica's value must
      have the same shape. SUM adds them; MEAN adds them and divides by the replica count.
    * `axis` given: first each replica reduces its own value along `axis` (a SUM there),
      then the per-replica results are summed across replicas. For MEAN TF computes, on
      each replica, the numerator (sum along `axis`) and the denominator (the size of
      `axis`, the product of sizes for several axes), SUM-reduces both across replicas and
      divides. So MEAN with an axis is the mean over every element along that axis on all
      replicas: a last partial batch [0, 1, 2, 3] + [4, 5] gets the denominator 6, not the
      mean of the two per-replica means. Replicas may hold different (even zero) sizes
      along `axis`; the remaining dimensions must agree. 0/0 (every replica empty) is NaN,
      as TF's true division gives.
    * Negative axes count from the end; an axis outside [-rank, rank) is a ValueError
      ("`axis` = 2 out of range for `value` with rank 2", TF's message for MEAN; for SUM
      TF's reduce_sum inside a tf.function fails shape inference, also a ValueError).

    Args:
      op: "SUM" or "MEAN" (any case) or an enum-like with `.name`.
      per_replica: list of array-likes, one per replica, in replica order.
      axis: None, an int, or a tuple/list of ints.

    Returns:
      The reduced array: int64 for SUM of integers, float64 (complex128) otherwise.

    Raises:
      ValueError: unknown op, axis out of range, or shapes that cannot be reduced.
      TypeError: `per_replica` is not a list, or `axis` is not an int/tuple/list.

    Example (the API page's example, 2 replicas returning their replica id):
      >>> reduce("SUM", [0, 1])
      array(1)
    """
    name = reduce_op_name(op)
    arrays = _as_arrays(per_replica)
    if axis is None:
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1:
            raise ValueError(
                f"cannot reduce per-replica values of different shapes {sorted(shapes)} "
                "with axis=None; pass the batch axis (axis=0) to reduce along it too"
            )
        total = sum_in_replica_order(arrays)
        if name == "SUM":
            return total
        return np.asarray(total.astype(_float_dtype(total.dtype)) / len(arrays))

    sums = []
    count = 0
    for a in arrays:
        axes = _normalize_axes(axis, a.ndim)
        sums.append(np.sum(a.astype(_accumulation_dtype([a])), axis=axes))
        count += math.prod(a.shape[i] for i in axes)
    shapes = {s.shape for s in sums}
    if len(shapes) != 1:
        raise ValueError(
            f"after reducing along axis {axis!r} the per-replica shapes differ "
            f"({sorted(shapes)}); only the reduced axis may differ between replicas"
        )
    total = sum_in_replica_order(sums)
    if name == "SUM":
        return total
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total.astype(_float_dtype(total.dtype)) / np.float64(count))


def reduce_non_distributed(op: Any, value: Any, num_replicas: int) -> np.ndarray:
    """Reduces a plain (not per-replica) value, as TF does when `reduce` gets one.

    TF rule (cross_device_ops.py `reduce_non_distributed_value`): a value that is not a
    DistributedValues is taken to be the same on every replica. A non-tensor value that is
    all zeros reduces to zeros; MEAN returns the value unchanged; SUM returns it unchanged
    only when there is one replica, and otherwise is refused, because summing N identical
    copies is "not clearly defined" there.

    Args:
      op: "SUM" or "MEAN".
      value: the plain value.
      num_replicas: the number of replicas in sync.

    Returns:
      The value as an array.

    Raises:
      ValueError: SUM of a nonzero plain value over more than one replica.
    """
    name = reduce_op_name(op)
    array = np.asarray(value)
    if np.all(array == 0):
        return np.zeros(array.shape, dtype=array.dtype)
    if name == "MEAN" or num_replicas == 1:
        return array
    raise ValueError(
        f"A non-DistributedValues value {value!r} cannot be reduced with the given reduce "
        f"op ReduceOp.{name}."
    )
