"""Builders: topologies of a given shape (fully connected, ring, switch, torus, clusters).

Every builder takes the per-direction link ``bandwidth`` in bytes/s and the per-link
``latency`` in seconds, and a ``device`` template (a :class:`Device` whose name and host the
builder replaces). Links come in both directions; each direction is its own :class:`Link`
with the full bandwidth (full-duplex links, as NVLink, PCIe, InfiniBand and ICI are).
Link order is deterministic (it is what routing breaks ties by).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

from simdist.topology.model import Device, Link, Switch, Topology

__all__ = [
    "NOMINAL_DEVICE",
    "fully_connected",
    "ring",
    "switch",
    "torus",
    "pcie_tree",
    "multi_node",
]

# A stand-in device for topologies that describe only a network (the closed-form tests,
# ASTRA-sim files). Its numbers are round placeholders, not a product's.
NOMINAL_DEVICE = Device(
    name="",
    kind="GPU",
    peak_flops={"float32": 1e13, "bfloat16": 1e14, "float16": 1e14},
    memory_bandwidth=1e12,
    memory_bytes=16 * 2**30,
)


def _check_count(name: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def _check_link(bandwidth: float, latency: float, what: str = "link") -> None:
    if not isinstance(bandwidth, (int, float)) or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise ValueError(
            f"{what} bandwidth must be a positive number of bytes/s, got {bandwidth!r}"
        )
    if not isinstance(latency, (int, float)) or not math.isfinite(latency) or latency < 0:
        raise ValueError(
            f"{what} latency must be a non-negative number of seconds, got {latency!r}"
        )


def _devices(names, device: Device | None, hosts=None) -> tuple[Device, ...]:
    template = device if device is not None else NOMINAL_DEVICE
    hosts = hosts if hosts is not None else [0] * len(names)
    return tuple(
        dataclasses.replace(template, name=n, host=h) for n, h in zip(names, hosts, strict=True)
    )


def _pair(a: str, b: str, bandwidth: float, latency: float, kind: str) -> list[Link]:
    return [Link(a, b, bandwidth, latency, kind), Link(b, a, bandwidth, latency, kind)]


def fully_connected(
    n: int,
    bandwidth: float,
    latency: float,
    *,
    device: Device | None = None,
    name: str | None = None,
    kind: str = "link",
    sources: tuple[str, ...] = (),
) -> Topology:
    """``n`` devices with a direct link for every ordered pair (the ideal network).

    Returns:
        A topology with ``n * (n - 1)`` links; device ``i`` is named ``"dev{i}"``.
    """
    _check_count("n", n)
    _check_link(bandwidth, latency)
    names = [f"dev{i}" for i in range(n)]
    links = tuple(
        Link(names[i], names[j], bandwidth, latency, kind)
        for i in range(n)
        for j in range(n)
        if i != j
    )
    return Topology(
        name or f"fully-connected-{n}", _devices(names, device), (), links, (), tuple(sources)
    )


def ring(
    n: int,
    bandwidth: float,
    latency: float,
    *,
    device: Device | None = None,
    name: str | None = None,
    kind: str = "link",
    sources: tuple[str, ...] = (),
) -> Topology:
    """``n`` devices in a bidirectional ring: ``i <-> (i + 1) % n``.

    ``torus_dims`` is ``(n,)`` (a ring is a 1-D torus), so routing takes the short way round.
    A ring of 2 has one link each way; a ring of 1 has none.
    """
    _check_count("n", n)
    _check_link(bandwidth, latency)
    return torus(
        (n,),
        bandwidth,
        latency,
        device=device,
        name=name or f"ring-{n}",
        kind=kind,
        sources=sources,
        _prefix="dev",
    )


def switch(
    n: int,
    bandwidth: float,
    latency: float,
    *,
    device: Device | None = None,
    name: str | None = None,
    kind: str = "switch",
    switch_name: str = "switch",
    device_prefix: str = "dev",
    sources: tuple[str, ...] = (),
) -> Topology:
    """``n`` devices on one non-blocking switch (a star: the NVSwitch / single-leaf model).

    Every device has one link to the switch and one back, each of ``bandwidth`` and
    ``latency``; a device-to-device transfer crosses two links (2 x latency). Devices are
    named ``f"{device_prefix}{i}"``.
    """
    _check_count("n", n)
    _check_link(bandwidth, latency)
    names = [f"{device_prefix}{i}" for i in range(n)]
    links = tuple(
        itertools.chain.from_iterable(
            _pair(d, switch_name, bandwidth, latency, kind) for d in names
        )
    )
    return Topology(
        name or f"switch-{n}",
        _devices(names, device),
        (Switch(switch_name, "switch"),),
        links,
        (),
        tuple(sources),
    )


def torus(
    dims,
    bandwidth: float,
    latency: float,
    *,
    wraparound=True,
    device: Device | None = None,
    name: str | None = None,
    kind: str = "ici",
    host_block=None,
    sources: tuple[str, ...] = (),
    _prefix: str = "chip",
) -> Topology:
    """A 1-D, 2-D or 3-D torus (or mesh) of devices with nearest-neighbour links.

    Device ranks are row-major over the coordinates (last dimension fastest, as
    ``numpy.unravel_index``); see :meth:`Topology.torus_coords`. Devices are named
    ``"chip(x,y,z)"`` (``"dev{rank}"`` for :func:`ring`).

    Args:
        dims: the size of each dimension, e.g. ``(4, 4, 4)``.
        bandwidth: bytes/s of each link, per direction.
        latency: seconds per link.
        wraparound: True (every dimension wraps), False (a mesh) or one bool per dimension.
            A dimension of size 2 has a single link each way either way; size 1 has none.
        device: the device template.
        name: the topology's name (default ``"torus-4x4x4"``).
        kind: the links' kind.
        host_block: the block of chips one host holds, e.g. ``(2, 2, 1)``; hosts are numbered
            row-major over the blocks. Default: one host.
        sources: citations for the constants.

    Returns:
        The topology, with ``torus_dims`` set to ``dims``.
    """
    dims = tuple(dims)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"torus dims must have 1 to 3 dimensions, got {dims}")
    for size in dims:
        _check_count("each torus dimension", size)
    _check_link(bandwidth, latency)
    wraps = (bool(wraparound),) * len(dims) if isinstance(wraparound, bool) else tuple(wraparound)
    if len(wraps) != len(dims):
        raise ValueError(f"wraparound has {len(wraps)} entries for {len(dims)} dimensions")
    coords = list(itertools.product(*(range(s) for s in dims)))  # row-major order
    if _prefix == "chip":
        names = [f"chip({','.join(map(str, c))})" for c in coords]
    else:
        names = [f"{_prefix}{r}" for r in range(len(coords))]
    if host_block is None:
        hosts = [0] * len(coords)
    else:
        block = tuple(host_block)
        if len(block) != len(dims) or any(b < 1 for b in block):
            raise ValueError(f"host_block {block} does not fit torus dims {dims}")
        grid = [-(-s // b) for s, b in zip(dims, block, strict=True)]
        hosts = []
        for c in coords:
            h = 0
            for ci, b, g in zip(c, block, grid, strict=True):
                h = h * g + ci // b
            hosts.append(h)
    rank = {c: r for r, c in enumerate(coords)}
    links = []
    for c in coords:  # for each chip, +direction then -direction neighbours, axis by axis
        for axis, size in enumerate(dims):
            if size == 1:
                continue
            targets = []
            for step in (1, -1):
                target = c[axis] + step
                if not 0 <= target < size:
                    if not (wraps[axis] or size == 2):
                        continue
                    target %= size
                if target not in targets:  # size 2: both directions reach one chip
                    targets.append(target)
            for target in targets:
                nb = c[:axis] + (target,) + c[axis + 1 :]
                links.append(Link(names[rank[c]], names[rank[nb]], bandwidth, latency, kind))
    default_name = "torus-" + "x".join(map(str, dims))
    return Topology(
        name or default_name,
        _devices(names, device, hosts),
        (),
        tuple(links),
        dims,
        tuple(sources),
    )


def pcie_tree(
    gpus: int,
    gpus_per_switch: int,
    bandwidth: float,
    latency: float,
    *,
    uplink_bandwidth: float | None = None,
    device: Device | None = None,
    name: str | None = None,
    sources: tuple[str, ...] = (),
) -> Topology:
    """One host's GPUs behind PCIe switches that hang off one CPU root complex.

    GPU ``i`` sits on switch ``i // gpus_per_switch``; every switch has an uplink to
    ``"cpu"``. GPUs on one switch talk through it (2 links); GPUs on different switches go
    up through the root complex (4 links). Devices are ``"node0/gpu{i}"``.
    """
    _check_count("gpus", gpus)
    _check_count("gpus_per_switch", gpus_per_switch)
    _check_link(bandwidth, latency, "PCIe")
    up_bw = uplink_bandwidth if uplink_bandwidth is not None else bandwidth
    _check_link(up_bw, latency, "PCIe uplink")
    names = [f"node0/gpu{i}" for i in range(gpus)]
    num_switches = -(-gpus // gpus_per_switch)
    switches = tuple(Switch(f"node0/pcie{k}", "pcie-switch") for k in range(num_switches))
    links = []
    for i, gpu in enumerate(names):
        links += _pair(gpu, switches[i // gpus_per_switch].name, bandwidth, latency, "pcie")
    for sw in switches:
        links += _pair(sw.name, "node0/cpu", up_bw, latency, "pcie")
    return Topology(
        name or f"pcie-{gpus}gpu",
        _devices(names, device),
        switches + (Switch("node0/cpu", "root-complex"),),
        tuple(links),
        (),
        tuple(sources),
    )


def multi_node(
    nodes: int,
    gpus_per_node: int,
    *,
    nvlink_bandwidth: float,
    nvlink_latency: float,
    nics_per_node: int,
    nic_bandwidth: float,
    nic_latency: float,
    pcie_bandwidth: float,
    pcie_latency: float,
    device: Device | None = None,
    name: str | None = None,
    network: str = "infiniband",
    sources: tuple[str, ...] = (),
) -> Topology:
    """GPU nodes with an NVSwitch inside each and network NICs to one fabric switch.

    Node ``k``'s GPUs are ``"node{k}/gpu{i}"`` with ``host=k``; they share the star switch
    ``"node{k}/nvswitch"`` (links of ``nvlink_bandwidth``: the GPU's total NVLink bandwidth,
    per direction). GPU ``i`` reaches the network through NIC
    ``i * nics_per_node // gpus_per_node`` of its node over a PCIe link. Every NIC has one
    link (of kind ``network``) to the fabric switch (``"ib"`` for InfiniBand, else the
    network's name), a single non-blocking switch standing for a full-bisection fat tree
    (not a rail-optimised fabric: any NIC reaches any other in two switch hops). An
    inter-node transfer crosses GPU -> NIC -> ib -> NIC -> GPU (4 links).

    Raises:
        ValueError: a count is not positive, or ``nics_per_node`` does not divide
            ``gpus_per_node``.
    """
    _check_count("nodes", nodes)
    _check_count("gpus_per_node", gpus_per_node)
    _check_count("nics_per_node", nics_per_node)
    if gpus_per_node % nics_per_node:
        raise ValueError(
            f"nics_per_node={nics_per_node} must divide gpus_per_node={gpus_per_node} "
            "(each NIC serves the same number of GPUs)"
        )
    _check_link(nvlink_bandwidth, nvlink_latency, "NVLink")
    _check_link(nic_bandwidth, nic_latency, "NIC")
    _check_link(pcie_bandwidth, pcie_latency, "PCIe")
    fabric = "ib" if network == "infiniband" else network
    names, hosts, switches, links = [], [], [], []
    for k in range(nodes):
        nvswitch = f"node{k}/nvswitch"
        switches.append(Switch(nvswitch, "nvswitch"))
        nics = [f"node{k}/nic{j}" for j in range(nics_per_node)]
        switches += [Switch(n, "nic") for n in nics]
        for i in range(gpus_per_node):
            gpu = f"node{k}/gpu{i}"
            names.append(gpu)
            hosts.append(k)
            links += _pair(gpu, nvswitch, nvlink_bandwidth, nvlink_latency, "nvlink")
            nic = nics[i * nics_per_node // gpus_per_node]
            links += _pair(gpu, nic, pcie_bandwidth, pcie_latency, "pcie")
        for nic in nics:
            links += _pair(nic, fabric, nic_bandwidth, nic_latency, network)
    switches.append(Switch(fabric, f"{network}-switch"))
    return Topology(
        name or f"cluster-{nodes}x{gpus_per_node}",
        _devices(names, device, hosts),
        tuple(switches),
        tuple(links),
        (),
        tuple(sources),
    )
