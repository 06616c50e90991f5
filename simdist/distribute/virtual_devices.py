"""The simulated host: how many virtual GPUs (and TPUs) it has, and TF's device listings.

The host always has ``CPU:0``; it has 4 virtual GPUs unless told otherwise (the guides'
examples use 4), set by ``simdist.config.set_virtual_devices(gpus=N)`` or the
``SIMDIST_VIRTUAL_GPUS`` environment variable (read when first needed). A worker of a
virtual cluster (``simdist.sim.launch``) sees its own host's GPU count. Set it before
creating a strategy, as TF requires devices to be configured before first use.
"""

from __future__ import annotations

import dataclasses

from simdist import settings
from simdist.core.context import mark_runtime_started
from simdist.core.device import DeviceSpec, canonical_name
from simdist.distribute.worker_context import current_worker

__all__ = [
    "PhysicalDevice",
    "LogicalDevice",
    "set_virtual_devices",
    "list_physical_devices",
    "list_logical_devices",
    "local_devices",
    "resolve_device",
]

DEFAULT_GPUS = settings.Settings().virtual_gpus  # a host's GPUs unless told otherwise
_ENV = settings.env_name("virtual_gpus")


@dataclasses.dataclass(frozen=True)
class PhysicalDevice:
    """``tf.config.PhysicalDevice``: ``name='/physical_device:GPU:0'``, ``device_type='GPU'``."""

    name: str
    device_type: str


@dataclasses.dataclass(frozen=True)
class LogicalDevice:
    """``tf.config.LogicalDevice``: ``name='/device:GPU:0'`` (full name in ``canonical``)."""

    name: str
    device_type: str


_counts: dict[str, int] | None = None  # set by set_virtual_devices; None: from the settings


def _from_env() -> dict[str, int]:
    return {"CPU": 1, "GPU": settings.get().virtual_gpus, "TPU": 0}


def _device_counts() -> dict[str, int]:
    counts = _from_env() if _counts is None else _counts  # set_virtual_devices, else settings
    worker = current_worker()
    if worker is not None and worker.gpus is not None:  # a virtual cluster's worker host
        return dict(counts, GPU=worker.gpus)
    return counts


def set_virtual_devices(gpus: int | None = None, tpus: int | None = None) -> None:
    """Configure the simulated host's accelerators (the CPU is always there).

    Raises:
        ValueError: a negative count.
    """
    global _counts
    counts = dict(_device_counts())
    for kind, n in (("GPU", gpus), ("TPU", tpus)):
        if n is None:
            continue
        if int(n) != n or n < 0:
            raise ValueError(f"The number of virtual {kind}s must be an integer >= 0, got {n!r}.")
        counts[kind] = int(n)
    _counts = counts


def _kinds(device_type: str | None) -> list[str]:
    if device_type is None:
        return ["CPU", "GPU", "TPU"]
    kind = device_type.upper()
    if kind not in ("CPU", "GPU", "TPU"):
        raise ValueError(f"Unknown device type {device_type!r}; use 'CPU', 'GPU' or 'TPU'.")
    return [kind]


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    mark_runtime_started()  # as in TF, listing devices starts the runtime
    counts = _device_counts()
    return [
        PhysicalDevice(f"/physical_device:{k}:{i}", k)
        for k in _kinds(device_type)
        for i in range(counts[k])
    ]


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    mark_runtime_started()
    counts = _device_counts()
    return [
        LogicalDevice(f"/device:{k}:{i}", k) for k in _kinds(device_type) for i in range(counts[k])
    ]


def local_devices(device_type: str) -> tuple[str, ...]:
    """Canonical names of this host's devices of one type, in index order."""
    return tuple(canonical_name(d.name) for d in list_logical_devices(device_type))


def resolve_device(name: str) -> str:
    """The canonical name of an existing local device.

    Raises:
        ValueError: the device is not on this simulated host (with how to add it).
    """
    canonical = canonical_name(name)
    spec = DeviceSpec.from_string(canonical)
    counts = _device_counts()
    kind, index = spec.device_type, spec.device_index
    if spec.job == "localhost" and index < counts.get(kind, 0):
        return canonical
    if spec.job != "localhost":
        return canonical  # remote tasks belong to the cluster layer (a later issue)
    hint = (
        f"simdist.config.set_virtual_devices(gpus={index + 1}) or {_ENV}={index + 1}"
        if kind == "GPU"
        else f"simdist.config.set_virtual_devices(tpus={index + 1})"
    )
    raise ValueError(
        f"Device {name!r} ({canonical}) does not exist: this simulated host has "
        f"{counts.get(kind, 0)} {kind}(s). Add more with {hint} before creating the strategy."
    )
