"""Public hypothesis strategies for distributed-semantics tests: values, datasets, clusters.

Every strategy draws plain data (NumPy arrays, ints, frozen dataclasses, dicts) so that a
shrunk counterexample prints readably and can be fed to any implementation. Examples::

    from hypothesis import given
    from simdist.testing import strategies as sds

    @given(sds.per_replica_values(max_replicas=4))
    def test_sum(values):           # values: a list of equally shaped arrays, one per replica
        ...

    @given(sds.per_replica_values(mismatch="outside_batch", min_rank=1))
    def test_rejects(values):       # at least two replicas' shapes differ outside axis 0
        ...

    @given(sds.dataset_specs(max_replicas=4))
    def test_split(spec):           # spec.elements, spec.global_batch_size, spec.num_replicas...
        ...
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = [
    "ClusterLimits",
    "ClusterShape",
    "DatasetSpec",
    "ShardSpec",
    "ElementSpec",
    "FLOAT_DTYPES",
    "VALUE_DTYPES",
    "aggregations",
    "cluster_shapes",
    "dataset_specs",
    "element_structures",
    "clusters_within",
    "fault_plans",
    "shard_specs",
    "to_fault_plan",
    "per_replica_values",
    "reduce_ops",
    "replica_counts",
    "topology_names",
    "update_kinds",
    "values_for",
]

VALUE_DTYPES = (np.float32, np.float64, np.int32)
FLOAT_DTYPES = (np.float32, np.float64)

MISMATCHES = (None, "batch", "outside_batch")


def replica_counts(max_replicas: int = 4, min_replicas: int = 1) -> st.SearchStrategy[int]:
    """Replica counts in [min_replicas, max_replicas]; shrinks toward the smallest."""
    return st.integers(min_replicas, max_replicas)


def reduce_ops() -> st.SearchStrategy[str]:
    """``"SUM"`` or ``"MEAN"``."""
    return st.sampled_from(["SUM", "MEAN"])


def aggregations(include_none: bool = True) -> st.SearchStrategy[str]:
    """Variable aggregations by name (``"NONE"`` only when ``include_none``)."""
    names = ["SUM", "MEAN", "ONLY_FIRST_REPLICA"] + (["NONE"] if include_none else [])
    return st.sampled_from(names)


def update_kinds() -> st.SearchStrategy[str]:
    """``"assign"``, ``"assign_add"`` or ``"assign_sub"``."""
    return st.sampled_from(["assign", "assign_add", "assign_sub"])


def values_for(dtype: Any, bound: float = 100.0) -> st.SearchStrategy:
    """Array elements for ``dtype``: integers in [-1000, 1000], finite floats in +-bound."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return st.integers(-1000, 1000)
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False, width=dtype.itemsize * 8)


@st.composite
def per_replica_values(
    draw,
    max_replicas: int = 4,
    min_replicas: int = 1,
    dtype: Any = None,
    min_rank: int = 0,
    max_rank: int = 3,
    max_side: int = 4,
    mismatch: str | None = None,
    bound: float = 100.0,
) -> list[np.ndarray]:
    """A per-replica value: one array per replica, in replica order.

    Args:
      max_replicas, min_replicas: the replica count's range.
      dtype: the arrays' dtype; drawn from ``VALUE_DTYPES`` when None.
      min_rank, max_rank, max_side: the shape's range (sides may be 0).
      mismatch: None (every replica has the same shape); ``"batch"`` (replicas may differ in
        the first dimension only, as partial batches do, rank >= 1); ``"outside_batch"``
        (at least two replicas differ in a dimension other than the first: rank >= 2 and
        at least 2 replicas).
      bound: the largest magnitude of a float element.

    Returns:
      A list of NumPy arrays.
    """
    if mismatch not in MISMATCHES:
        raise ValueError(f"mismatch must be one of {MISMATCHES}, got {mismatch!r}")
    if mismatch == "batch":
        min_rank = max(min_rank, 1)
    if mismatch == "outside_batch":
        min_rank, min_replicas = max(min_rank, 2), max(min_replicas, 2)
    max_rank = max(max_rank, min_rank)
    n = draw(replica_counts(max_replicas, min_replicas))
    dtype = np.dtype(draw(st.sampled_from(VALUE_DTYPES)) if dtype is None else dtype)
    shape = draw(
        hnp.array_shapes(min_dims=min_rank, max_dims=max_rank, min_side=0, max_side=max_side)
    )
    shapes = [shape] * n
    if mismatch == "batch":
        shapes = [(draw(st.integers(0, max_side)), *shape[1:]) for _ in range(n)]
    elif mismatch == "outside_batch":
        dim = draw(st.integers(1, len(shape) - 1))
        other = draw(st.integers(0, max_side).filter(lambda s: s != shape[dim]))
        odd = draw(st.integers(1, n - 1))
        changed = (*shape[:dim], other, *shape[dim + 1 :])
        shapes = [changed if r == odd else shape for r in range(n)]
    elements = values_for(dtype, bound)
    return [draw(hnp.arrays(dtype, s, elements=elements)) for s in shapes]


@dataclasses.dataclass(frozen=True)
class ElementSpec:
    """One component of a dataset element: its shape (without the batch) and dtype."""

    shape: tuple[int, ...]
    dtype: Any


def element_structures(max_rank: int = 2, max_side: int = 3) -> st.SearchStrategy:
    """A dataset element's structure: an element shape, or a tuple / dict of them.

    Returns:
      A strategy of nests (tuples, dicts) whose leaves are :class:`ElementSpec`.
    """
    leaf = st.builds(
        ElementSpec,
        hnp.array_shapes(min_dims=0, max_dims=max_rank, min_side=1, max_side=max_side),
        st.sampled_from([np.int64, np.float32]),
    )
    return st.one_of(
        leaf,
        st.tuples(leaf, leaf),
        st.fixed_dictionaries({"features": leaf, "label": leaf}),
    )


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """A batched in-memory dataset distributed over one worker's replicas.

    Attributes:
      elements: an array (first dimension indexes the elements), or a tuple / dict of them.
      length: the number of elements.
      global_batch_size: the ``.batch`` size.
      drop_remainder: the ``.batch`` flag.
      num_replicas: replicas of the strategy.
      auto_shard_policy: ``"AUTO"`` or ``"OFF"``.
    """

    elements: Any
    length: int
    global_batch_size: int
    drop_remainder: bool
    num_replicas: int
    auto_shard_policy: str


def _materialise(structure, length: int, offset: int):
    """Element i of leaf k holds the value offset*1000 + i (traceable in a counterexample)."""
    if isinstance(structure, dict):
        return {
            key: _materialise(structure[key], length, offset + j)
            for j, key in enumerate(sorted(structure))
        }
    if isinstance(structure, ElementSpec):
        shape = structure.shape
        base = np.arange(length, dtype=np.int64) + offset * 1000
        block = np.broadcast_to(base.reshape((length,) + (1,) * len(shape)), (length, *shape))
        return np.ascontiguousarray(block).astype(structure.dtype)
    return tuple(_materialise(item, length, offset + j) for j, item in enumerate(structure))


@st.composite
def dataset_specs(
    draw,
    max_replicas: int = 4,
    max_length: int = 20,
    max_batch: int = 9,
    structures: bool = True,
    policies: tuple[str, ...] = ("AUTO", "OFF"),
) -> DatasetSpec:
    """A :class:`DatasetSpec`: lengths 0..max_length, batch sizes 1..max_batch, any
    drop_remainder, 1..max_replicas replicas, and (with ``structures``) tuple / dict elements.
    Element i holds the value i, so a misplaced element is visible in a counterexample."""
    structure = draw(element_structures()) if structures else ElementSpec((), np.int64)
    length = draw(st.integers(0, max_length))
    return DatasetSpec(
        elements=_materialise(structure, length, 0),
        length=length,
        global_batch_size=draw(st.integers(1, max_batch)),
        drop_remainder=draw(st.booleans()),
        num_replicas=draw(replica_counts(max_replicas)),
        auto_shard_policy=draw(st.sampled_from(list(policies))),
    )


@dataclasses.dataclass(frozen=True)
class ClusterShape:
    """Workers x devices per worker (the shape of a multi-worker cluster).

    Attributes:
      workers: worker tasks (>= 1).
      devices_per_worker: replicas on each worker (>= 1).
    """

    workers: int
    devices_per_worker: int

    @property
    def num_replicas(self) -> int:
        """Replicas in sync over the whole cluster."""
        return self.workers * self.devices_per_worker


def cluster_shapes(
    max_workers: int = 4, max_devices: int = 4, min_workers: int = 1
) -> st.SearchStrategy:
    """:class:`ClusterShape` values; shrinks toward ``min_workers`` x 1."""
    return st.builds(
        ClusterShape, st.integers(min_workers, max_workers), st.integers(1, max_devices)
    )


@dataclasses.dataclass(frozen=True)
class ClusterLimits:
    """The cluster shapes an implementation accepts (an adapter's ``min_workers``,
    ``max_workers`` and ``max_devices_per_worker``); multi-worker properties draw within."""

    min_workers: int
    max_workers: int
    max_devices_per_worker: int


def clusters_within(limits: ClusterLimits, min_workers: int = 1) -> st.SearchStrategy:
    """:class:`ClusterShape` values within ``limits`` with at least ``min_workers`` workers
    (or the limits' own minimum, whichever is larger; capped at the maximum)."""
    low = min(max(limits.min_workers, min_workers), limits.max_workers)
    return cluster_shapes(limits.max_workers, limits.max_devices_per_worker, low)


@dataclasses.dataclass(frozen=True)
class ShardSpec:
    """A batched dataset for a multi-worker cluster, from memory or from text files.

    Exactly one of ``elements`` and ``file_lines`` is set. Values are consecutive ints
    (0, 1, 2...; in files numbered file after file), so a counterexample shows which
    element went where.

    Attributes:
      elements: int64 elements (``from_tensor_slices``), or None.
      file_lines: one int64 array per text file (one line per value), or None.
      global_batch_size: the ``.batch`` size.
      drop_remainder: the ``.batch`` flag.
    """

    elements: Any
    file_lines: Any
    global_batch_size: int
    drop_remainder: bool

    @property
    def length(self) -> int:
        """The number of elements in all."""
        if self.elements is not None:
            return len(self.elements)
        return sum(len(f) for f in self.file_lines)


@st.composite
def shard_specs(
    draw,
    files: bool | None = None,
    min_files: int = 1,
    max_files: int = 5,
    max_length: int = 16,
    max_batch: int = 8,
) -> ShardSpec:
    """A :class:`ShardSpec`: from files (``files=True``), memory (False) or either (None).

    Args:
      files: the source kind; drawn when None.
      min_files, max_files: how many files (each 0..4 lines).
      max_length: the most in-memory elements.
      max_batch: the largest global batch size.
    """
    from_files = draw(st.booleans()) if files is None else files
    batch_size = draw(st.integers(1, max_batch))
    drop = draw(st.booleans())
    if not from_files:
        n = draw(st.integers(0, max_length))
        return ShardSpec(np.arange(n, dtype=np.int64), None, batch_size, drop)
    sizes = draw(
        st.lists(st.integers(0, 4), min_size=min_files, max_size=max(min_files, max_files))
    )
    bounds = np.cumsum([0, *sizes])
    lines = tuple(np.arange(bounds[i], bounds[i + 1], dtype=np.int64) for i in range(len(sizes)))
    return ShardSpec(None, lines, batch_size, drop)


def topology_names(include_tpu: bool = True) -> st.SearchStrategy[str]:
    """Names of simdist's topology presets (``simdist.topology.get_topology`` takes them)."""
    from simdist.topology.presets import list_topologies

    names = [name for name, _ in list_topologies()]
    if not include_tpu:
        names = [n for n in names if not n.startswith("v")]
    return st.sampled_from(names)


@st.composite
def fault_plans(
    draw, cluster: ClusterShape | None = None, max_step: int = 10, max_delay: float = 0.01
) -> dict[str, dict]:
    """A fault plan as plain data: ``{"kills": {worker: step}, "delays": {worker: seconds}}``.

    ``to_fault_plan(plan)`` builds the ``simdist.distribute.faults.FaultPlan``. A plan may kill
    every worker (a recovery path a test may want to see).

    Args:
      cluster: the cluster the plan is for (drawn when None).
      max_step: the latest step a kill happens at (steps count from 1).
      max_delay: the longest straggler delay, in seconds.
    """
    cluster = draw(cluster_shapes()) if cluster is None else cluster
    workers = st.integers(0, cluster.workers - 1)
    kills = draw(st.dictionaries(workers, st.integers(1, max_step), max_size=cluster.workers))
    delays = draw(st.dictionaries(workers, st.floats(0, max_delay), max_size=cluster.workers))
    return {"kills": dict(sorted(kills.items())), "delays": dict(sorted(delays.items()))}


def to_fault_plan(plan: dict[str, dict]):
    """The ``simdist.distribute.faults.FaultPlan`` of a plan drawn by :func:`fault_plans`."""
    from simdist.distribute.faults import FaultPlan

    built = FaultPlan()
    for worker, step in sorted(plan["kills"].items()):
        built.kill_worker(worker, step)
    for worker, seconds in sorted(plan["delays"].items()):
        built.slow_worker(worker, seconds)
    return built
