"""The topology graph: devices, switches and directed links, with their hardware constants.

A :class:`Topology` is the contract between the presets / file formats (which build one),
the collective algorithms (which read its shape: hosts, torus dimensions) and the cost model
(which routes transfers over its links). Units are SI throughout: bytes, seconds, bytes per
second, FLOP per second.
"""

from __future__ import annotations

import dataclasses
import functools

from simdist.topology.system import GpuSystem

__all__ = ["Device", "Switch", "Link", "Topology", "MAX_DEVICES", "check_device_count"]

# The default size cap of presets and files: building is linear in devices and links, pricing
# more than linear. Lift it with ``max_devices=None`` (the CLI: ``--no-size-limit``).
MAX_DEVICES = 8192


def check_device_count(what: str, devices: int, max_devices: int | None) -> None:
    """Raise ValueError when ``devices`` exceeds ``max_devices`` (None: no cap)."""
    if max_devices is not None and devices > max_devices:
        raise ValueError(
            f"{what} has {devices} devices, more than the limit of {max_devices}; building "
            "and pricing it would take very long. Pass max_devices=None (the CLI: "
            "--no-size-limit) to build it anyway"
        )


@dataclasses.dataclass(frozen=True)
class Device:
    """A compute device (one replica's device)."""

    name: str  # unique, e.g. "node0/gpu3" or "chip(1,2,0)"
    kind: str  # "GPU", "TPU" or "CPU"
    peak_flops: dict  # dtype name ("float32", "bfloat16", ...) -> FLOP/s
    memory_bandwidth: float  # bytes/s
    memory_bytes: int
    host: int = 0  # which host (node) it sits in


@dataclasses.dataclass(frozen=True)
class Switch:
    """A forwarding element that is not a device (NVSwitch, PCIe switch, IB leaf/spine, NIC)."""

    name: str
    kind: str = "switch"


@dataclasses.dataclass(frozen=True)
class Link:
    """One direction of a physical link: ``src`` -> ``dst`` (device or switch names)."""

    src: str
    dst: str
    bandwidth: float  # bytes/s in this direction
    latency: float  # seconds
    kind: str = ""  # "nvlink", "pcie", "infiniband", "ici", ...


@dataclasses.dataclass(frozen=True)
class Topology:
    """Devices (in rank order), switches, directed links, and the shape collectives use."""

    name: str
    devices: tuple[Device, ...]
    switches: tuple[Switch, ...]
    links: tuple[Link, ...]
    torus_dims: tuple[int, ...] = ()  # e.g. (4, 4, 4) for a 3D torus; () if not a torus
    sources: tuple[str, ...] = ()  # where each hardware constant comes from (citations)
    system: GpuSystem | None = None  # what NCCL's tuning model reads (GPU presets), else None

    @property
    def num_devices(self) -> int:
        return len(self.devices)

    @property
    def num_hosts(self) -> int:
        return len({d.host for d in self.devices})

    # -- Helpers (added by the topology package; the fields above are the fixed contract). --
    # Indexes are built once per instance with functools.cached_property, which writes the
    # instance __dict__ directly and so works on a frozen dataclass; they are not fields and
    # take no part in ==, repr or dataclasses.replace.

    @functools.cached_property
    def _device_positions(self) -> dict:
        return {device.name: rank for rank, device in enumerate(self.devices)}

    @functools.cached_property
    def _out_links(self) -> dict:
        out: dict = {}
        for link in self.links:  # link order is kept: routing breaks ties by it
            out.setdefault(link.src, []).append(link)
        return {node: tuple(links) for node, links in out.items()}

    @functools.cached_property
    def _link_index(self) -> dict:
        index: dict = {}
        for link in self.links:
            index.setdefault((link.src, link.dst), link)  # the first of parallel links
        return index

    @property
    def node_names(self) -> tuple[str, ...]:
        """Every node's name: the devices in rank order, then the switches."""
        return tuple(d.name for d in self.devices) + tuple(s.name for s in self.switches)

    def device_index(self, name: str) -> int:
        """The rank (position in ``devices``) of the device called ``name``.

        Raises:
            ValueError: no device has that name.
        """
        try:
            return self._device_positions[name]
        except KeyError:
            raise ValueError(
                f"topology {self.name!r} has no device {name!r}; devices are "
                f"{self.devices[0].name!r} ... {self.devices[-1].name!r}"
                if self.devices
                else f"topology {self.name!r} has no devices"
            ) from None

    def links_from(self, node: str) -> tuple[Link, ...]:
        """The links leaving ``node`` (a device or switch name), in ``links`` order."""
        return self._out_links.get(node, ())

    def link_between(self, src: str, dst: str) -> Link | None:
        """The first link ``src -> dst`` in ``links`` order, or None when there is none."""
        return self._link_index.get((src, dst))

    def devices_on_host(self, host: int) -> tuple[int, ...]:
        """Ranks of the devices whose ``host`` is ``host``, ascending."""
        return tuple(rank for rank, d in enumerate(self.devices) if d.host == host)

    @property
    def hosts(self) -> tuple[int, ...]:
        """The distinct host ids, ascending."""
        return tuple(sorted({d.host for d in self.devices}))

    def torus_coords(self, rank: int) -> tuple[int, ...]:
        """Coordinates of device ``rank`` on the torus: row-major (C order), last dim fastest.

        ``rank == sum(coords[i] * prod(torus_dims[i+1:]))``, as ``numpy.unravel_index``.

        Raises:
            ValueError: the topology is not a torus, or rank is out of range.
        """
        if not self.torus_dims:
            raise ValueError(f"topology {self.name!r} is not a torus (torus_dims is empty)")
        if not 0 <= rank < self.num_devices:
            raise ValueError(f"rank {rank} is out of range for {self.num_devices} devices")
        coords = []
        for size in reversed(self.torus_dims):
            rank, c = divmod(rank, size)
            coords.append(c)
        return tuple(reversed(coords))

    def torus_rank(self, coords) -> int:
        """The rank at torus coordinates ``coords`` (inverse of :meth:`torus_coords`).

        Coordinates wrap modulo each dimension, so ``(x + 1, y)`` names the +x neighbour.
        """
        if len(coords) != len(self.torus_dims):
            raise ValueError(
                f"coords {tuple(coords)} have {len(coords)} dimensions; torus has "
                f"{len(self.torus_dims)} ({'x'.join(map(str, self.torus_dims))})"
            )
        rank = 0
        for c, size in zip(coords, self.torus_dims, strict=True):
            rank = rank * size + (c % size)
        return rank

    @functools.cached_property
    def torus_wraparound(self) -> tuple[bool, ...]:
        """Per torus dimension: whether a wraparound link closes it into a ring.

        Read from the links: dimension ``i`` of size ``k >= 3`` wraps when device 0 has a
        link to the device at coordinate ``k - 1`` along ``i``. Sizes 1 and 2 report False
        (there is no separate wraparound link). A mesh dimension reports False.
        """
        flags = []
        for axis, size in enumerate(self.torus_dims):
            if size < 3:
                flags.append(False)
                continue
            coords = [0] * len(self.torus_dims)
            coords[axis] = size - 1
            far = self.devices[self.torus_rank(coords)].name
            flags.append(self.link_between(self.devices[0].name, far) is not None)
        return tuple(flags)
