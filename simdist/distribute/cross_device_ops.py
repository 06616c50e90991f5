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

MEAN is the SUM divided by the replica count (TF's true division for integers: float64).
"""

from __future__ import annotations

import numpy as np

from simdist import collectives, errors
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
    profile_hook.record_collective("all_reduce", arrays, algorithm)
    kwargs = {"ranks_per_node": len(arrays)} if algorithm == "hierarchical" else {}
    total = collectives.reduce_arrays("sum", list(arrays), algorithm=algorithm, **kwargs)
    return _mean(total, len(arrays)) if reduce_op is ReduceOp.MEAN else total


class CrossDeviceOps:
    """Base of the cross-device reduction strategies a ``MirroredStrategy`` can use."""

    _algorithm: str | None = "reduce_broadcast"

    def reduce_arrays(self, reduce_op, arrays: list[np.ndarray]) -> np.ndarray:
        """Reduce one array per replica (replica order) to one array with this op's algorithm."""
        return reduce_arrays(ReduceOp.from_value(reduce_op), arrays, self._algorithm)

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
