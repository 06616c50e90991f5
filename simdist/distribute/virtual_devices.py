"""The simulated host: its physical devices, their logical split, and TF's device listings.

The host always has one physical ``CPU:0``; it has 4 virtual GPUs unless told otherwise (the
guides' examples use 4), set by ``simdist.config.set_virtual_devices(gpus=N)`` or the
``SIMDIST_VIRTUAL_GPUS`` environment variable (read when first needed). TF's own way is
honoured too: ``tf.config.set_logical_device_configuration(cpu, [config] * 4)`` (``config``
a ``LogicalDeviceConfiguration()``) splits a physical device into logical ones
(``/device:CPU:0`` ... ``CPU:3``), and ``tf.config.set_visible_devices`` hides physical
devices; as in TF, both must come before the runtime starts (a first tensor, variable or
logical-device listing), else ``RuntimeError``.

The configuration is per process. A worker of a virtual cluster (``simdist.sim.launch``) is
a process of its own: it starts with its host's GPU count, and what it configures stays with
it (it never leaks into the launching process or the other workers).
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import NamedTuple

from simdist import settings
from simdist.core import context as core_context
from simdist.core import step_hooks
from simdist.core.context import ProcessState, mark_runtime_started, process_state
from simdist.core.device import DeviceSpec, canonical_name
from simdist.distribute.worker_context import current_worker

__all__ = [
    "PhysicalDevice",
    "LogicalDevice",
    "LogicalDeviceConfiguration",
    "set_virtual_devices",
    "list_physical_devices",
    "list_logical_devices",
    "set_logical_device_configuration",
    "get_logical_device_configuration",
    "set_visible_devices",
    "get_visible_devices",
    "set_memory_growth",
    "get_memory_growth",
    "local_devices",
    "resolve_device",
]

DEFAULT_GPUS = settings.Settings().virtual_gpus  # a host's GPUs unless told otherwise
_ENV = settings.env_name("virtual_gpus")
_KINDS = ("CPU", "GPU", "TPU")


class PhysicalDevice(NamedTuple):
    """``tf.config.PhysicalDevice``: ``name='/physical_device:GPU:0'``, ``device_type='GPU'``."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """``tf.config.LogicalDevice``: ``name='/device:GPU:0'``, ``device_type='GPU'``."""

    name: str
    device_type: str


class LogicalDeviceConfiguration(NamedTuple):
    """``tf.config.LogicalDeviceConfiguration``: one logical device carved from a physical one.

    Attributes:
        memory_limit: MB of the physical GPU's memory for this logical GPU (required for GPUs,
            not supported for CPUs, as in TF).
        experimental_priority: GPU stream priority (GPUs only).
        experimental_device_ordinal: GPU ordering among the logical devices (GPUs only).
    """

    memory_limit: int | None = None
    experimental_priority: int | None = None
    experimental_device_ordinal: int | None = None


@dataclasses.dataclass
class _Host:
    """One process's device configuration."""

    counts: dict[str, int]  # physical devices per kind
    logical: dict[PhysicalDevice, tuple[LogicalDeviceConfiguration, ...]] = dataclasses.field(
        default_factory=dict
    )
    hidden: set[PhysicalDevice] = dataclasses.field(default_factory=set)
    memory_growth: dict[PhysicalDevice, bool] = dataclasses.field(default_factory=dict)


_counts: dict[str, int] | None = None  # the launching process: set_virtual_devices, or None
_main_logical: dict = {}
_main_hidden: set = set()
_main_growth: dict = {}
_other_hosts: weakref.WeakKeyDictionary[ProcessState, _Host] = weakref.WeakKeyDictionary()


def _from_env() -> dict[str, int]:
    return {"CPU": 1, "GPU": settings.get().virtual_gpus, "TPU": 0}


def _main_counts() -> dict[str, int]:
    return _from_env() if _counts is None else _counts  # set_virtual_devices, else settings


def _host() -> _Host:
    """This process's (or this virtual worker's) device configuration, created on first use."""
    runtime = process_state()
    if runtime is core_context._process_state:  # the launching process itself
        return _Host(_main_counts(), _main_logical, _main_hidden, _main_growth)
    host = _other_hosts.get(runtime)
    if host is None:
        counts = dict(_main_counts())
        worker = current_worker()
        if worker is not None and worker.gpus is not None:  # a virtual cluster's worker host
            counts["GPU"] = worker.gpus
        host = _other_hosts.setdefault(runtime, _Host(counts))
    return host


def _store_counts(host: _Host, counts: dict[str, int]) -> None:
    global _counts
    if host.logical is _main_logical:
        _counts = counts
    host.counts = counts


def set_virtual_devices(gpus: int | None = None, tpus: int | None = None) -> None:
    """Configure the simulated host's physical accelerators (the CPU is always there).

    simdist's own addition (TF's hosts have the devices they have). It configures this
    process only; in a virtual cluster's worker, that worker's host.

    Raises:
        ValueError: a negative or non-integer count.
    """
    host = _host()
    counts = dict(host.counts)
    gpus = step_hooks.shape("gpus", gpus)
    for kind, n in (("GPU", gpus), ("TPU", tpus)):
        if n is None:
            continue
        if isinstance(n, bool) or int(n) != n or n < 0:
            raise ValueError(f"The number of virtual {kind}s must be an integer >= 0, got {n!r}.")
        counts[kind] = int(n)
    _store_counts(host, counts)
    for device in [
        d for d in host.logical if int(d.name.rsplit(":", 1)[1]) >= counts[d.device_type]
    ]:
        del host.logical[device]


def _kinds(device_type: str | None) -> list[str]:
    if device_type is None:
        return list(_KINDS)
    kind = str(device_type).upper()
    if kind not in _KINDS:
        raise ValueError(f"Unknown device type {device_type!r}; use 'CPU', 'GPU' or 'TPU'.")
    return [kind]


def _physical(host: _Host, kind: str) -> list[PhysicalDevice]:
    return [PhysicalDevice(f"/physical_device:{kind}:{i}", kind) for i in range(host.counts[kind])]


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """``tf.config.list_physical_devices``: the host's physical devices (does not start the
    runtime, so a logical configuration may follow, as in the TF guides).

    Raises:
        ValueError: an unknown device type (TF returns ``[]``; see docs/differences.md).
    """
    host = _host()
    return [d for k in _kinds(device_type) for d in _physical(host, k)]


def _logical_counts(host: _Host) -> dict[str, int]:
    counts = {}
    for kind in _KINDS:
        devices = [d for d in _physical(host, kind) if d not in host.hidden]
        counts[kind] = sum(len(host.logical.get(d, ())) or 1 for d in devices)
    return counts


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """``tf.config.list_logical_devices``: the devices ops run on (starts the runtime).

    Raises:
        ValueError: an unknown device type.
    """
    kinds = _kinds(device_type)
    mark_runtime_started()
    counts = _logical_counts(_host())
    return [LogicalDevice(f"/device:{k}:{i}", k) for k in kinds for i in range(counts[k])]


def _check_physical(host: _Host, device) -> PhysicalDevice:
    if not isinstance(device, PhysicalDevice) or device not in _physical(host, device.device_type):
        raise ValueError(f"Unrecognized device: {device!r}")
    return device


def _refuse_after_start(what: str) -> None:
    if process_state().runtime_started:
        raise RuntimeError(
            f"{what} cannot be modified after being initialized: configure devices at program "
            "startup, before the first tensor, variable or tf.config.list_logical_devices()."
        )


def set_logical_device_configuration(device: PhysicalDevice, logical_devices) -> None:
    """``tf.config.set_logical_device_configuration``: split ``device`` into logical devices.

    Args:
        device: a ``PhysicalDevice`` from ``list_physical_devices()``.
        logical_devices: a list of ``LogicalDeviceConfiguration``, one per logical device.

    Raises:
        ValueError: an unknown device, a non-configuration entry, an empty list (TF would
            leave the process without that device), a ``memory_limit`` (or priority,
            ordinal) on a CPU, a GPU configuration without ``memory_limit``, or a TPU.
        RuntimeError: the runtime already started and the configuration differs.
    """
    host = _host()
    device = _check_physical(host, device)
    configs = tuple(logical_devices)
    for config in configs:
        if not isinstance(config, LogicalDeviceConfiguration):
            raise ValueError(
                f"logical_devices must be a list of tf.config.LogicalDeviceConfiguration, got "
                f"an element {config!r}."
            )
    if not configs:
        raise ValueError(
            f"logical_devices for {device.name} is empty, which would leave the process without "
            f"that {device.device_type}; give at least one LogicalDeviceConfiguration()."
        )
    if device.device_type == "TPU":
        raise ValueError("Virtual devices are not supported for TPU; only CPUs and GPUs split.")
    for config in configs:
        if device.device_type == "CPU":
            for field in LogicalDeviceConfiguration._fields:
                if getattr(config, field) is not None:
                    name = "memory limit" if field == "memory_limit" else field
                    raise ValueError(
                        f"Setting {name} on CPU virtual devices is currently not supported"
                    )
        elif config.memory_limit is None:
            raise ValueError("Setting memory limit is required for GPU virtual devices")
    if host.logical.get(device) == configs:
        return
    _refuse_after_start("Virtual devices")
    if host.memory_growth.get(device):
        raise ValueError("Cannot set virtual device configuration on a device with memory growth")
    host.logical[device] = configs


def get_logical_device_configuration(device: PhysicalDevice) -> list | None:
    """``tf.config.get_logical_device_configuration``: the list set for ``device``, or None.

    Raises:
        ValueError: an unknown device.
    """
    host = _host()
    configs = host.logical.get(_check_physical(host, device))
    return None if configs is None else list(configs)


def set_visible_devices(devices, device_type: str | None = None) -> None:
    """``tf.config.set_visible_devices``: the physical devices of ``device_type`` the runtime
    uses (the others are hidden). Before the runtime starts, as in TF.

    Raises:
        ValueError: an unknown device, or hiding the CPU (TF needs one).
        RuntimeError: the runtime already started and the visible set changes.
    """
    host = _host()
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    wanted = {_check_physical(host, d) for d in devices}
    kinds = (
        _kinds(device_type) if device_type is not None else sorted({d.device_type for d in wanted})
    )
    hidden = set(host.hidden)
    for kind in kinds:
        for device in _physical(host, kind):
            (hidden.discard if device in wanted else hidden.add)(device)
    if hidden == host.hidden:
        return
    _refuse_after_start("Visible devices")
    if any(d.device_type == "CPU" for d in hidden):
        raise ValueError("CPU device cannot be hidden: TF needs the CPU; keep it visible.")
    host.hidden.clear()
    host.hidden.update(hidden)


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """``tf.config.get_visible_devices``: the visible physical devices (all, by default)."""
    host = _host()
    return [d for k in _kinds(device_type) for d in _physical(host, k) if d not in host.hidden]


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """``tf.config.experimental.set_memory_growth`` (GPUs only; recorded, as the simulated
    GPUs have no memory to grow).

    Raises:
        ValueError: an unknown or non-GPU device, or one with a logical configuration.
        RuntimeError: the runtime already started and the setting changes.
    """
    host = _host()
    device = _check_physical(host, device)
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    if device in host.logical:
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    if host.memory_growth.get(device) == bool(enable):
        return
    _refuse_after_start("Physical devices")
    host.memory_growth[device] = bool(enable)


def get_memory_growth(device: PhysicalDevice) -> bool:
    """``tf.config.experimental.get_memory_growth``: whether growth is enabled (GPUs).

    Raises:
        ValueError: an unknown device.
    """
    host = _host()
    return host.memory_growth.get(_check_physical(host, device), False)


def _device_counts() -> dict[str, int]:
    return _logical_counts(_host())


def local_devices(device_type: str) -> tuple[str, ...]:
    """Canonical names of this host's devices of one type, in index order."""
    return tuple(canonical_name(d.name) for d in list_logical_devices(device_type))


def resolve_device(name) -> str:
    """The canonical name of an existing local device, named by a string, a
    ``LogicalDevice`` (what ``tf.config.list_logical_devices`` lists; TF accepts them as
    strategy devices too) or a ``DeviceSpec``.

    Raises:
        ValueError: the device is not on this simulated host (with how to add it).
    """
    if isinstance(name, LogicalDevice):
        name = name.name
    elif isinstance(name, DeviceSpec):
        name = name.to_string()
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
        if kind == "TPU"
        else f"tf.config.set_logical_device_configuration(tf.config.list_physical_devices("
        f"'CPU')[0], [tf.config.LogicalDeviceConfiguration()] * {index + 1}) at startup"
    )
    raise ValueError(
        f"Device {name!r} ({canonical}) does not exist: this simulated host has "
        f"{counts.get(kind, 0)} {kind}(s). Add more with {hint} before creating the strategy."
    )
