"""Cross-device ops: how per-replica arrays become one reduced array, and where it lands.

``NcclAllReduce``, ``HierarchicalCopyAllReduce`` and ``ReductionToOneDevice`` are TF's
names. Today all three reduce by adding the replicas' arrays one by one in replica order
(``((r0 + r1) + r2) + ...``), in the arrays' dtype, then dividing by the replica count for
MEAN; the collectives issue gives each its own algorithm (ring, tree, reduce-then-broadcast)
with that algorithm's own, documented, order of additions.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.distribute.reduce_util import ReduceOp

__all__ = [
    "CrossDeviceOps",
    "NcclAllReduce",
    "HierarchicalCopyAllReduce",
    "ReductionToOneDevice",
    "reduce_arrays",
]


def reduce_arrays(reduce_op: ReduceOp, arrays: list[np.ndarray]) -> np.ndarray:
    """SUM or MEAN of same-shape arrays, added in list (replica) order, in their dtype.

    MEAN divides the sum by the replica count; for integers it is TF's true division, so
    int32/int64 give float64 and smaller integers float32 (TF 2.21 gives 1.5 for the MEAN
    of replica ids 0..3).

    Raises:
        InvalidArgumentError: the arrays' shapes or dtypes differ.
    """
    first = arrays[0]
    for i, a in enumerate(arrays[1:], start=1):
        if a.shape != first.shape or a.dtype != first.dtype:
            raise errors.InvalidArgumentError(
                f"Cannot reduce across replicas: replica 0 has shape {first.shape} "
                f"{first.dtype}, replica {i} has shape {a.shape} {a.dtype}. Every replica must "
                "contribute the same shape and dtype."
            )
    total = first.copy()
    for a in arrays[1:]:
        total += a
    if reduce_op is ReduceOp.MEAN:
        count = len(arrays)
        if total.dtype.kind in "iu":
            target = np.float64 if total.dtype.itemsize >= 4 else np.float32
            total = total.astype(target) / target(count)
        elif total.dtype.kind == "b":
            raise errors.InvalidArgumentError("MEAN is not defined for bool values.")
        else:
            total = total / total.dtype.type(count)
    return total


class CrossDeviceOps:
    """Base of the cross-device reduction strategies a ``MirroredStrategy`` can use."""

    def reduce_arrays(self, reduce_op, arrays: list[np.ndarray]) -> np.ndarray:
        """Reduce one array per replica (replica order) to one array."""
        return reduce_arrays(ReduceOp.from_value(reduce_op), arrays)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NcclAllReduce(CrossDeviceOps):
    """TF's default for GPUs: an NCCL all-reduce (ring/tree with the collectives issue)."""

    def __init__(self, num_packs: int = 1) -> None:
        if num_packs < 0:
            raise ValueError(
                f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is specified."
            )
        self.num_packs = num_packs


class HierarchicalCopyAllReduce(CrossDeviceOps):
    """Reduce within groups of devices, then across groups (DGX-1-style hierarchical copy)."""

    def __init__(self, num_packs: int = 1) -> None:
        if num_packs < 0:
            raise ValueError(
                f"HierarchicalCopy requires num_packs >= 0, but {num_packs} is specified."
            )
        self.num_packs = num_packs


class ReductionToOneDevice(CrossDeviceOps):
    """Copy every value to one device, reduce there, broadcast the result back."""

    def __init__(self, reduce_to_device: str | None = None, accumulation_fn=None) -> None:
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn
