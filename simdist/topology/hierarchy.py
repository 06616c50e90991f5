"""Hierarchies of dimensions (ASTRA-sim's analytical networks): Ring, FullyConnected, Switch."""

from __future__ import annotations

import itertools
import math

from simdist.topology.builders import _check_count, _check_link, _devices, _pair
from simdist.topology.model import Device, Link, Switch, Topology

__all__ = ["multi_dim"]

_DIM_KINDS = ("Ring", "FullyConnected", "Switch")


def multi_dim(
    kinds,
    counts,
    bandwidths,
    latencies,
    *,
    device: Device | None = None,
    name: str | None = None,
    sources: tuple[str, ...] = (),
) -> Topology:
    """A multi-dimensional hierarchy in ASTRA-sim's analytical-network sense.

    Device ``i`` has coordinates with dimension 0 fastest (ASTRA-sim's NPU numbering:
    ``i = c0 + n0 * (c1 + n1 * c2)``). Along dimension ``d`` every group of devices that
    differ only in coordinate ``d`` forms a ``Ring`` (bidirectional), a ``FullyConnected``
    clique, or a ``Switch`` star (its own switch), with that dimension's bandwidth
    (bytes/s per direction) and latency (seconds per link). All-``Ring`` hierarchies are
    tori: ``torus_dims`` is the counts reversed (simdist's row-major rank order equals
    ASTRA-sim's numbering that way). With more than one dimension, ``host`` is the index
    along the outer dimensions (``i // counts[0]``): dimension 0 is taken as intra-node.
    """
    kinds, counts = tuple(kinds), tuple(counts)
    bandwidths, latencies = tuple(bandwidths), tuple(latencies)
    if not kinds:
        raise ValueError("topology: at least one dimension is needed")
    for field, values in (
        ("npus_count", counts),
        ("bandwidth", bandwidths),
        ("latency", latencies),
    ):
        if len(values) != len(kinds):
            raise ValueError(
                f"{field} has {len(values)} entries but topology has {len(kinds)} dimensions"
            )
    for kind in kinds:
        if kind not in _DIM_KINDS:
            raise ValueError(f"topology: unknown dimension kind {kind!r}; use one of {_DIM_KINDS}")
    for c in counts:
        _check_count("npus_count entry", c)
    for bw, lat in zip(bandwidths, latencies, strict=True):
        _check_link(bw, lat)
    total = math.prod(counts)
    names = [f"npu{i}" for i in range(total)]
    hosts = [i // counts[0] for i in range(total)] if len(counts) > 1 else [0] * total
    strides = [math.prod(counts[:d]) for d in range(len(counts))]
    links, switches = [], []
    switch_counter = itertools.count()
    for d, (kind, size) in enumerate(zip(kinds, counts, strict=True)):
        if size == 1:
            continue
        bw, lat, stride = bandwidths[d], latencies[d], strides[d]
        link_kind = f"dim{d}"
        for base in range(total):
            if (base // stride) % size:
                continue  # base is the group member with coordinate 0 along d
            group = [names[base + k * stride] for k in range(size)]
            if kind == "Ring":
                for k in range(size):
                    a, b = group[k], group[(k + 1) % size]
                    if size == 2 and k == 1:
                        break
                    links += _pair(a, b, bw, lat, link_kind)
            elif kind == "FullyConnected":
                for a, b in itertools.permutations(group, 2):
                    links.append(Link(a, b, bw, lat, link_kind))
            else:
                sw = f"dim{d}/switch{next(switch_counter)}"
                switches.append(Switch(sw, f"dim{d}"))
                for a in group:
                    links += _pair(a, sw, bw, lat, link_kind)
    torus_dims = tuple(reversed(counts)) if all(k == "Ring" for k in kinds) else ()
    return Topology(
        name or "astra-" + "x".join(map(str, counts)),
        _devices(names, device, hosts),
        tuple(switches),
        tuple(links),
        torus_dims,
        tuple(sources),
    )
