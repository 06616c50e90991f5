"""TPU slices and TPU input: replicas per accelerator type, and the steps a slice runs.

Rules. Replicas of ``TPUStrategy`` are the TPU devices TensorFlow sees (the simdist docs,
after Google's system-architecture pages): v2 and v3 expose each of a chip's 2 TensorCores
as a device, and their names count TensorCores (``v3-8``: 4 chips, 8 replicas); v4 and v5p
names count TensorCores too but a chip's 2 cores form one megacore device (``v4-8``: 4 chips,
4 replicas); v5e (``v5litepod-N``, ``v5e-N``) names count chips of one core (``v5litepod-16``:
16 replicas). Input: each host reads its DATA shard of the per-replica batches, as a worker
of a multi-worker strategy does (``sharding.distribute_across_workers``); hosts may deliver
in any order, which changes which replica gets which examples but not a step's examples.

>>> replicas_per_slice("v3-8"), replicas_per_slice("v4-8"), replicas_per_slice("v5litepod-16")
(8, 4, 16)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from simdist_reference import sharding

#: accelerator type -> (TPU devices = TPUStrategy replicas, hosts), stated name by name.
ACCELERATORS: dict[str, tuple[int, int]] = {
    "v3-8": (8, 1),
    "v3-32": (32, 4),
    "v3-64": (64, 8),
    "v4-8": (4, 1),
    "v4-16": (8, 2),
    "v4-32": (16, 4),
    "v4-64": (32, 8),
    "v5p-8": (4, 1),
    "v5p-16": (8, 2),
    "v5p-32": (16, 4),
    "v5litepod-1": (1, 1),
    "v5litepod-4": (4, 1),
    "v5litepod-8": (8, 1),
    "v5litepod-16": (16, 2),
    "v5e-16": (16, 2),
    "v5litepod-32": (32, 4),
}


def replicas_per_slice(accelerator: str) -> int:
    """``TPUStrategy(...).num_replicas_in_sync`` on a slice of ``accelerator`` type.

    Raises:
      ValueError: a name not in ``ACCELERATORS``.
    """
    if accelerator not in ACCELERATORS:
        raise ValueError(f"unknown accelerator {accelerator!r}; known: {sorted(ACCELERATORS)}")
    return ACCELERATORS[accelerator][0]


def hosts_per_slice(accelerator: str) -> int:
    """How many hosts (TPU workers) the slice has (simdist's presets; see ``ACCELERATORS``)."""
    replicas_per_slice(accelerator)
    return ACCELERATORS[accelerator][1]


def tpu_steps(
    elements: Any, global_batch_size: int, accelerator: str, drop_remainder: bool
) -> list[list[np.ndarray]]:
    """Every step of ``experimental_distribute_dataset(from_tensor_slices(elements).batch(
    global_batch_size, drop_remainder))`` on the slice, in host order.

    Returns:
      steps[step]: one array per replica (host-major), empty where a replica got no data.
    """
    n, hosts = replicas_per_slice(accelerator), hosts_per_slice(accelerator)
    per_worker = sharding.distribute_across_workers(
        global_batch_size,
        hosts,
        n // hosts,
        elements=np.asarray(elements),
        policy="DATA" if hosts > 1 else "AUTO",
        drop_remainder=drop_remainder,
    )
    return [[b for host in step for b in host] for step in per_worker]


def static_shapes(step: list[np.ndarray]) -> bool:
    """Whether a step's per-replica batches all have one shape (what a TPU step with
    ``experimental_enable_dynamic_batch_size=False`` needs; else InvalidArgumentError)."""
    return len({np.shape(b) for b in step}) <= 1


def step_loss(step: list[np.ndarray], global_batch_size: int) -> np.ndarray:
    """The SUM over replicas of ``compute_average_loss(x * x, global_batch_size)``: the
    squares of the step's real examples (padding adds nothing) over the global batch."""
    total = sum(float(np.sum(np.asarray(b, np.float64) ** 2)) for b in step)
    return np.float64(total / global_batch_size)
