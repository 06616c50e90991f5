"""Cross-device ops: how per-replica arrays become one reduced array, by which algorithm.

``NcclAllReduce``, ``HierarchicalCopyAllReduce`` and ``ReductionToOneDevice`` are TF's
names; each runs a real collective algorithm from ``simdist.collectives``, whose order of
additions (documented there) decides the rounding, bit-identically on every run:

* ``NcclAllReduce``: NCCL-like selection by message size (``select_algorithm``: recursive
  doubling or direct for small messages, ring for large; ``SIMDIST_COLLECTIVE_ALGO``
  overrides);
* ``HierarchicalCopyAllReduce``: ``hierarchical`` (reduce-scatter within the host, all-reduce
  across hosts, all-gather within the host); on one simulated host, a ring over its devices;
* ``ReductionToOneDevice``: ``reduce_broadcast``, the replicas' arrays added one by one in
  replica order on one device, then copied back.

``SIMDIST_FORCE_ALL_REDUCE`` (:mod:`simdist.collectives.forced`) overrides all three: every
reduction then runs the forced algorithm (``hierarchical`` with all replicas on one host,
which is the ring's order), or ``exact``, the correctly rounded exact sum.

MEAN is the SUM divided by the replica count (TF's true division for integers: float64).

A batch of reductions (a step's gradients, ``batch_reduce_to``) goes as TF sends it:
``NcclAllReduce`` and ``HierarchicalCopyAllReduce`` with ``num_packs`` > 0 concatenate the
values of each dtype into one flat buffer per replica, split it into ``num_packs`` packs
(the last takes the remainder) and all-reduce each pack; with ``num_packs=0``, and for
``ReductionToOneDevice``, each value is reduced on its own. Packing changes which algorithm
a message size selects and where ring chunks fall, so it changes rounding (within what any
order of additions gives), never which values are added.
"""

from __future__ import annotations

import numpy as np

from simdist import collectives, errors
from simdist.collectives.forced import EXACT, forced_all_reduce
from simdist.core import profile_hook
from simdist.distribute.reduce_util import ReduceOp

__all__ = [
    "CrossDeviceOps",
    "NcclAllReduce",
    "HierarchicalCopyAllReduce",
    "ReductionToOneDevice",
    "reduce_arrays",
]


def _check_same(arrays: list[np.ndarray]) -> None:
    first = arrays[0]
    for i, a in enumerate(arrays[1:], start=1):
        if a.shape != first.shape or a.dtype != first.dtype:
            raise errors.InvalidArgumentError(
                f"Cannot reduce across replicas: replica 0 has shape {first.shape} "
                f"{first.dtype}, replica {i} has shape {a.shape} {a.dtype}. Every replica must "
                "contribute the same shape and dtype."
            )
    if first.dtype.kind == "b":
        raise errors.InvalidArgumentError(
            "Cannot reduce bool values across replicas; cast them to int32 first."
        )


def _mean(total: np.ndarray, count: int) -> np.ndarray:
    if total.dtype.kind in "iu":
        target = np.float64 if total.dtype.itemsize >= 4 else np.float32
        return total.astype(target) / target(count)
    return total / total.dtype.type(count)


def reduce_arrays(
    reduce_op: ReduceOp, arrays: list[np.ndarray], algorithm: str | None = "reduce_broadcast"
) -> np.ndarray:
    """SUM or MEAN of same-shape arrays (one per replica, replica order) by ``algorithm``.

    The default, ``reduce_broadcast``, adds in replica order (``((r0 + r1) + r2) + ...``).
    MEAN of integers is TF's true division: int32/int64 give float64, smaller ints float32
    (TF 2.21 gives 1.5 for the MEAN of replica ids 0..3).

    Raises:
        InvalidArgumentError: the arrays' shapes or dtypes differ, or they are bool.
    """
    _check_same(arrays)
    algorithm = forced_all_reduce() or algorithm  # SIMDIST_FORCE_ALL_REDUCE wins
    profile_hook.record_collective("all_reduce", arrays, algorithm)
    if algorithm == EXACT:
        total = collectives.reduce_arrays("sum", list(arrays), "ring", reproducible=True)
        return _mean(total, len(arrays)) if reduce_op is ReduceOp.MEAN else total
    kwargs = {"ranks_per_node": len(arrays)} if algorithm == "hierarchical" else {}
    total = collectives.reduce_arrays("sum", list(arrays), algorithm=algorithm, **kwargs)
    return _mean(total, len(arrays)) if reduce_op is ReduceOp.MEAN else total


def _packed_reduce(
    op: ReduceOp, values: list[list[np.ndarray]], num_packs: int, sum_arrays
) -> list[np.ndarray]:
    """``values[i][r]``: value i of replica r. Per dtype: concatenate, split into
    ``num_packs`` packs, all-reduce each (``sum_arrays(arrays)``), cut the sums back into
    the values' shapes."""
    for arrays in values:
        _check_same(arrays)
    results: list = [None] * len(values)
    by_dtype: dict[str, list[int]] = {}
    for i, arrays in enumerate(values):
        by_dtype.setdefault(arrays[0].dtype.str, []).append(i)
    replicas = len(values[0])
    for indices in by_dtype.values():
        flats = [
            np.concatenate([values[i][r].reshape(-1) for i in indices]) for r in range(replicas)
        ]
        total_size = flats[0].size
        split = total_size // num_packs
        bounds = [k * split for k in range(num_packs)] + [total_size]
        # Packs with no elements (fewer elements than packs) send nothing.
        packs = [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]
        sums = [sum_arrays([f[a:b] for f in flats]) for a, b in packs]
        if len(sums) == 1:
            total = sums[0]
        else:
            total = np.concatenate(sums) if sums else flats[0]  # every value empty
        offset = 0
        for i in indices:
            shape, size = values[i][0].shape, values[i][0].size
            part = total[offset : offset + size].reshape(shape)
            offset += size
            results[i] = _mean(part, replicas) if op is ReduceOp.MEAN else part
    return results


class CrossDeviceOps:
    """Base of the cross-device reduction strategies a ``MirroredStrategy`` can use."""

    _algorithm: str | None = "reduce_broadcast"
    num_packs = 0  # no packing: each value of a batch is reduced on its own

    def reduce_arrays(self, reduce_op, arrays: list[np.ndarray]) -> np.ndarray:
        """Reduce one array per replica (replica order) to one array with this op's algorithm."""
        return reduce_arrays(ReduceOp.from_value(reduce_op), arrays, self._algorithm)

    def batch_reduce_arrays(self, reduce_op, values: list[list[np.ndarray]]) -> list[np.ndarray]:
        """Reduce several values at once (``values[i]``: value i's array on each replica).

        Packs them as TF does when ``num_packs`` > 0 (see the module docstring); the
        results are in the order of ``values``.

        Raises:
            InvalidArgumentError: a value's arrays differ in shape or dtype across replicas.
        """
        op = ReduceOp.from_value(reduce_op)
        if self.num_packs > 0 and values:
            return _packed_reduce(
                op, values, self.num_packs, lambda arrays: self.reduce_arrays(ReduceOp.SUM, arrays)
            )
        return [self.reduce_arrays(op, arrays) for arrays in values]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NcclAllReduce(CrossDeviceOps):
    """TF's default for GPUs: an NCCL-like all-reduce (algorithm chosen by message size)."""

    _algorithm = None  # simdist.collectives.select_algorithm decides

    def __init__(self, num_packs: int = 1) -> None:
        if num_packs < 0:
            raise ValueError(
                f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is specified."
            )
        self.num_packs = num_packs


class HierarchicalCopyAllReduce(CrossDeviceOps):
    """Reduce within each host, all-reduce across hosts, copy back within each host."""

    _algorithm = "hierarchical"

    def __init__(self, num_packs: int = 1) -> None:
        if num_packs < 0:
            raise ValueError(
                f"HierarchicalCopy requires num_packs >= 0, but {num_packs} is specified."
            )
        self.num_packs = num_packs


class ReductionToOneDevice(CrossDeviceOps):
    """Copy every value to one device, reduce there in replica order, broadcast it back."""

    _algorithm = "reduce_broadcast"

    def __init__(self, reduce_to_device: str | None = None, accumulation_fn=None) -> None:
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn
