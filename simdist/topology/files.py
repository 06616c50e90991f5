"""Topology files: simdist's JSON description (load, validate, save); ASTRA-sim by suffix.

simdist JSON (units are in the field names: GB/s = 1e9 B/s, microseconds, TFLOPS, GiB)::

    {
      "name": "my-box",
      "device_defaults": {"kind": "GPU", "peak_tflops": {"bfloat16": 312},
                          "memory_bandwidth_gb_s": 2039, "memory_gib": 80},
      "devices": [{"name": "gpu0", "host": 0}, {"name": "gpu1", "host": 0}],
      "switches": [{"name": "nvswitch", "kind": "nvswitch"}],
      "links": [{"src": "gpu0", "dst": "nvswitch", "bandwidth_gb_s": 300,
                 "latency_us": 0.3, "kind": "nvlink"}, ...],
      "torus_dims": [],
      "sources": ["where each constant comes from"]
    }

A link entry is full duplex (both directions, each with the full bandwidth) unless it says
``"bidirectional": false``. Devices are listed in rank order. ``device_defaults`` fills fields
a device leaves out. An optional ``"nccl_system"`` object holds the fields of
:class:`~simdist.topology.system.GpuSystem` (what NCCL's tuning model reads; GPU presets
save it), so a saved GPU preset is priced by NCCL's model as the preset is. Every error is
a ``ValueError`` whose message starts with the path of the offending field, e.g.
``links[3].dst: unknown node 'gpu9'``.

ASTRA-sim network files are read by :mod:`simdist.topology.astra` (re-exported here).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os

from simdist.topology.astra import ASTRA_GB as ASTRA_GB
from simdist.topology.astra import load_astra_network as load_astra_network
from simdist.topology.astra import parse_astra_network as parse_astra_network
from simdist.topology.astra import read_text
from simdist.topology.model import MAX_DEVICES, Device, Link, Switch, Topology, check_device_count
from simdist.topology.system import GpuSystem

__all__ = [
    "load_topology",
    "save_topology",
    "topology_from_dict",
    "topology_to_dict",
    "load_astra_network",
    "parse_astra_network",
]

_GB = 1e9
_GIB = 2**30
_US = 1e-6
_TFLOPS = 1e12

_TOP_FIELDS = {
    "name", "devices", "switches", "links", "torus_dims", "sources", "device_defaults",
    "nccl_system",
}  # fmt: skip
_DEVICE_FIELDS = {"name", "kind", "peak_tflops", "memory_bandwidth_gb_s", "memory_gib", "host"}
_SWITCH_FIELDS = {"name", "kind"}
_LINK_FIELDS = {"src", "dst", "bandwidth_gb_s", "latency_us", "kind", "bidirectional"}
_DEVICE_KINDS = ("GPU", "TPU", "CPU")


def _fail(path: str, message: str):
    raise ValueError(f"{path}: {message}")


def _check_fields(entry, path: str, allowed: set, required: tuple) -> None:
    if not isinstance(entry, dict):
        _fail(path, f"must be an object, got {type(entry).__name__}")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        _fail(f"{path}.{unknown[0]}", f"unknown field; allowed fields: {sorted(allowed)}")
    for field in required:
        if field not in entry:
            _fail(path, f"missing field {field!r}")


def _number(value, path: str, *, positive: bool = False, allow_zero: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(path, f"must be a finite number, got {value!r}")
    if positive and value <= 0:
        _fail(path, f"must be > 0, got {value!r}")
    if not allow_zero and value < 0:
        _fail(path, f"must be >= 0, got {value!r}")
    return float(value)


def _name(value, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        _fail(path, f"must be a non-empty string, got {value!r}")
    return value


def topology_from_dict(data: dict) -> Topology:
    """Validate a simdist JSON description (already parsed) and build its Topology.

    Raises:
        ValueError: a malformed or inconsistent description; the message names the field.
    """
    _check_fields(data, "topology", _TOP_FIELDS, ("name", "devices", "links"))
    name = _name(data["name"], "name")
    defaults = data.get("device_defaults", {})
    _check_fields(defaults, "device_defaults", _DEVICE_FIELDS - {"name"}, ())
    raw_devices = data["devices"]
    if not isinstance(raw_devices, list) or not raw_devices:
        _fail("devices", "must be a non-empty list")
    seen: dict = {}
    devices = []
    for i, raw in enumerate(raw_devices):
        path = f"devices[{i}]"
        _check_fields(raw, path, _DEVICE_FIELDS, ("name",))
        entry = {**defaults, **raw}
        for field in ("kind", "peak_tflops", "memory_bandwidth_gb_s", "memory_gib"):
            if field not in entry:
                _fail(path, f"missing field {field!r} (and no device_defaults.{field})")
        dev_name = _name(entry["name"], f"{path}.name")
        if dev_name in seen:
            _fail(f"{path}.name", f"duplicate name {dev_name!r} (also {seen[dev_name]})")
        seen[dev_name] = path
        if entry["kind"] not in _DEVICE_KINDS:
            _fail(f"{path}.kind", f"must be one of {_DEVICE_KINDS}, got {entry['kind']!r}")
        flops = entry["peak_tflops"]
        if not isinstance(flops, dict) or not flops:
            _fail(f"{path}.peak_tflops", "must be a non-empty object of dtype -> TFLOPS")
        peak = {
            str(k): _number(v, f"{path}.peak_tflops.{k}", positive=True) * _TFLOPS
            for k, v in flops.items()
        }
        host = entry.get("host", 0)
        if isinstance(host, bool) or not isinstance(host, int) or host < 0:
            _fail(f"{path}.host", f"must be an integer >= 0, got {host!r}")
        devices.append(
            Device(
                dev_name,
                entry["kind"],
                peak,
                _number(
                    entry["memory_bandwidth_gb_s"], f"{path}.memory_bandwidth_gb_s", positive=True
                )
                * _GB,
                int(_number(entry["memory_gib"], f"{path}.memory_gib", positive=True) * _GIB),
                host,
            )
        )
    switches = []
    raw_switches = data.get("switches", [])
    if not isinstance(raw_switches, list):
        _fail("switches", "must be a list")
    for i, raw in enumerate(raw_switches):
        path = f"switches[{i}]"
        _check_fields(raw, path, _SWITCH_FIELDS, ("name",))
        sw_name = _name(raw["name"], f"{path}.name")
        if sw_name in seen:
            _fail(f"{path}.name", f"duplicate name {sw_name!r} (also {seen[sw_name]})")
        seen[sw_name] = path
        switches.append(Switch(sw_name, str(raw.get("kind", "switch"))))
    links = _links(data["links"], seen)
    torus_dims = _torus_dims(data.get("torus_dims", []), len(devices))
    sources = data.get("sources", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        _fail("sources", "must be a list of strings")
    system = _system(data.get("nccl_system"), len(devices))
    topology = Topology(
        name, tuple(devices), tuple(switches), links, torus_dims, tuple(sources), system
    )
    _check_connected(topology)
    return topology


def _system(raw, num_devices: int) -> GpuSystem | None:
    """The optional ``nccl_system`` object: :class:`GpuSystem`'s fields by name."""
    if raw is None:
        return None
    names = {f.name for f in dataclasses.fields(GpuSystem)}
    if not isinstance(raw, dict):
        _fail("nccl_system", "must be an object of GpuSystem fields")
    unknown = sorted(set(raw) - names)
    if unknown:
        _fail("nccl_system", f"unknown field(s) {unknown}; GpuSystem has {sorted(names)}")
    try:
        system = GpuSystem(**raw)
    except (TypeError, ValueError) as e:
        _fail("nccl_system", str(e))
    if system.num_gpus != num_devices:
        _fail(
            "nccl_system",
            f"describes {system.num_gpus} GPUs ({system.nodes} x {system.gpus_per_node}) but "
            f"the file has {num_devices} devices",
        )
    return system


def _links(raw_links, nodes: dict) -> tuple[Link, ...]:
    if not isinstance(raw_links, list):
        _fail("links", "must be a list")
    links = []
    for i, raw in enumerate(raw_links):
        path = f"links[{i}]"
        _check_fields(raw, path, _LINK_FIELDS, ("src", "dst", "bandwidth_gb_s", "latency_us"))
        ends = []
        for end in ("src", "dst"):
            node = _name(raw[end], f"{path}.{end}")
            if node not in nodes:
                _fail(f"{path}.{end}", f"unknown node {node!r} (not a device or switch)")
            ends.append(node)
        if ends[0] == ends[1]:
            _fail(path, f"a link from {ends[0]!r} to itself")
        bandwidth = _number(raw["bandwidth_gb_s"], f"{path}.bandwidth_gb_s", positive=True) * _GB
        latency = _number(raw["latency_us"], f"{path}.latency_us", allow_zero=False) * _US
        kind = str(raw.get("kind", ""))
        both = raw.get("bidirectional", True)
        if not isinstance(both, bool):
            _fail(f"{path}.bidirectional", f"must be true or false, got {both!r}")
        links.append(Link(ends[0], ends[1], bandwidth, latency, kind))
        if both:
            links.append(Link(ends[1], ends[0], bandwidth, latency, kind))
    return tuple(links)


def _torus_dims(raw, num_devices: int) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in raw
    ):
        _fail("torus_dims", f"must be a list of positive integers, got {raw!r}")
    if raw and math.prod(raw) != num_devices:
        _fail("torus_dims", f"{raw} holds {math.prod(raw)} devices but there are {num_devices}")
    return tuple(raw)


def _check_connected(topology: Topology) -> None:
    if topology.num_devices < 2:
        return
    start = topology.devices[0].name
    reached = {start}
    stack = [start]
    while stack:
        for link in topology.links_from(stack.pop()):
            if link.dst not in reached:
                reached.add(link.dst)
                stack.append(link.dst)
    for i, device in enumerate(topology.devices):
        if device.name not in reached:
            _fail(f"devices[{i}]", f"{device.name!r} cannot be reached from {start!r} by links")


def topology_to_dict(topology: Topology) -> dict:
    """The simdist JSON description of ``topology`` (every link written one-way)."""
    return {
        "name": topology.name,
        "devices": [
            {
                "name": d.name,
                "kind": d.kind,
                "peak_tflops": {k: v / _TFLOPS for k, v in d.peak_flops.items()},
                "memory_bandwidth_gb_s": d.memory_bandwidth / _GB,
                "memory_gib": d.memory_bytes / _GIB,
                "host": d.host,
            }
            for d in topology.devices
        ],
        "switches": [{"name": s.name, "kind": s.kind} for s in topology.switches],
        "links": [
            {
                "src": link.src,
                "dst": link.dst,
                "bandwidth_gb_s": link.bandwidth / _GB,
                "latency_us": link.latency / _US,
                "kind": link.kind,
                "bidirectional": False,
            }
            for link in topology.links
        ],
        "torus_dims": list(topology.torus_dims),
        "sources": list(topology.sources),
        **(
            {"nccl_system": dataclasses.asdict(topology.system)}
            if topology.system is not None
            else {}
        ),
    }


def save_topology(topology: Topology, path) -> None:
    """Write ``topology`` as simdist JSON to ``path``."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(topology_to_dict(topology), f, indent=1)
        f.write("\n")


def load_topology(
    path, *, device: Device | None = None, max_devices: int | None = MAX_DEVICES
) -> Topology:
    """Load a topology file: simdist JSON (``.json``) or ASTRA-sim YAML (``.yml``/``.yaml``).

    Args:
        path: the file.
        device: for ASTRA-sim files (which describe no compute), the device template
            (default :data:`simdist.topology.builders.NOMINAL_DEVICE`).
        max_devices: refuse files that describe more devices (None: no cap).

    Raises:
        ValueError: malformed content (the message names the field), an unknown suffix, or
            more devices than ``max_devices``.
        OSError: a file that cannot be read (missing, a directory, no permission).
    """
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix in (".yml", ".yaml"):
        return load_astra_network(path, device=device, max_devices=max_devices)
    if suffix != ".json":
        raise ValueError(
            f"{path}: unknown topology file type {suffix!r}; use .json (simdist) or "
            ".yml/.yaml (ASTRA-sim analytical network)"
        )
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON: {e}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply to be a topology") from None
    if isinstance(data, dict) and isinstance(data.get("devices"), list):
        check_device_count(f"topology file {path}", len(data["devices"]), max_devices)
    return topology_from_dict(data)
