"""Text reports of topologies: the ``simdist topology list`` table and ``show`` description."""

from __future__ import annotations

import os

from simdist.topology.model import MAX_DEVICES, Topology

__all__ = ["list_table", "describe", "resolve"]


def resolve(name_or_path: str, max_devices: int | None = MAX_DEVICES) -> Topology:
    """A preset by name, or a topology file (``.json``, ``.yml``, ``.yaml``) by path.

    Raises:
        ValueError: an unknown name, malformed file, or more devices than ``max_devices``.
        OSError: a file that cannot be read.
    """
    from simdist.topology.files import load_topology
    from simdist.topology.presets import get_topology

    if os.path.splitext(name_or_path)[1].lower() in (".json", ".yml", ".yaml"):
        return load_topology(name_or_path, max_devices=max_devices)
    return get_topology(name_or_path, max_devices=max_devices)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [str(c).ljust(w) for c, w in zip(row, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def list_table() -> str:
    """The preset table: name, devices, hosts, description."""
    from simdist.topology.presets import get_topology, list_topologies

    rows = []
    for name, description in list_topologies():
        topology = get_topology(name)
        rows.append((name, str(topology.num_devices), str(topology.num_hosts), description))
    return _table(("name", "devices", "hosts", "description"), rows)


def _si(value: float, unit: str) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:g} {prefix}{unit}"
    return f"{value:g} {unit}"


def _system(topology: Topology) -> str:
    system = topology.system
    cc = system.compute_capability
    parts = [f"{system.nodes} node(s) x {system.gpus_per_node} {system.gpu} (sm_{cc})"]
    if system.nvlinks_per_gpu:
        fabric = "NVSwitch" + (" with NVLink SHARP" if system.nvls else "")
        parts.append(f"{system.nvlinks_per_gpu} NVLinks per GPU to {fabric}")
    parts.append(f"PCIe Gen{system.pcie_gen} x{system.pcie_lanes} ({system.pcie_bw:g} GB/s)")
    if system.nodes > 1 or system.nics_per_node:
        parts.append(
            f"{system.nics_per_node} x {system.nic_gbps:g} Gb/s {system.network} NICs per node"
        )
    parts.append(f"{system.cpu_vendor} CPU")
    return ", ".join(parts)


def describe(topology: Topology) -> str:
    """A multi-line description: devices, link classes, hosts, torus shape, sources."""
    lines = [f"topology {topology.name}"]
    kinds: dict = {}
    for device in topology.devices:
        key = (
            device.kind,
            tuple(sorted(device.peak_flops.items())),
            device.memory_bandwidth,
            device.memory_bytes,
        )
        kinds[key] = kinds.get(key, 0) + 1
    lines.append(f"devices: {topology.num_devices}")
    for (kind, flops, mem_bw, mem), count in kinds.items():
        peaks = ", ".join(f"{dtype} {_si(v, 'FLOP/s')}" for dtype, v in flops)
        lines.append(
            f"  {count} x {kind}: {peaks}; memory {mem / 2**30:g} GiB at {_si(mem_bw, 'B/s')}"
        )
    hosts = topology.hosts
    per_host = sorted({len(topology.devices_on_host(h)) for h in hosts})
    lines.append(f"hosts: {len(hosts)} ({'/'.join(map(str, per_host))} devices per host)")
    if topology.switches:
        counts: dict = {}
        for sw in topology.switches:
            counts[sw.kind] = counts.get(sw.kind, 0) + 1
        lines.append("switches: " + ", ".join(f"{n} x {k}" for k, n in counts.items()))
    classes: dict = {}
    for link in topology.links:
        key = (link.kind or "link", link.bandwidth, link.latency)
        classes[key] = classes.get(key, 0) + 1
    lines.append(f"links: {len(topology.links)} directed")
    for (kind, bw, lat), count in classes.items():
        lines.append(
            f"  {count} x {kind}: {_si(bw, 'B/s')} per direction, {lat * 1e6:g} us latency"
        )
    if topology.torus_dims:
        shape = "x".join(map(str, topology.torus_dims))
        wraps = topology.torus_wraparound
        closed = (
            "torus"
            if all(w or s < 3 for w, s in zip(wraps, topology.torus_dims, strict=True))
            else "mesh"
        )
        lines.append(f"torus dims: {shape} ({closed}; wraparound per dim: {list(wraps)})")
    if topology.system is not None:
        lines.append("as NCCL's tuning model sees it (simdist.cost.nccl): " + _system(topology))
    lines.append("sources:")
    lines += [f"  - {s}" for s in topology.sources] or ["  (none given)"]
    return "\n".join(lines)
