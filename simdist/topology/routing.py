"""Routing: the path of links a transfer from one device to another crosses.

Rules (deterministic by construction, never by dict/set order of ids):

* **Tori** (``torus_dims`` set, one device per coordinate): dimension-order routing. The
  path corrects dimension 0 first, then 1, ...; along each dimension it takes the shorter
  way round when the dimension wraps (:attr:`Topology.torus_wraparound`), the positive
  direction on a tie, and the only way on a mesh dimension. Costs O(number of hops); no
  graph search, so all pairs of a 4096-chip torus route quickly.
* **Everything else** (switches, rings, fully connected, hierarchies): a shortest path by
  hop count over the directed links, found by breadth-first search from the source. Ties go
  to the path discovered first when each node's out-links are visited in ``links`` order;
  the result depends only on the topology's tuples. Paths may pass through switches and,
  where the topology offers no other way (a ring of GPUs), through devices.

Routes are memoised per topology: one BFS predecessor table per source node, kept in the
Topology instance's ``__dict__`` (frozen dataclasses allow that; the cache is not a field),
so it lives exactly as long as the topology and never outlives an id. At most a million
routes are kept per topology; past that they are recomputed, which is cheap on tori.
"""

from __future__ import annotations

from collections import deque

from simdist.topology.model import Link, Topology

__all__ = ["route", "route_ranks", "hop_count"]

_CACHE_KEY = "_simdist_route_cache"
_MAX_CACHED_ROUTES = 1_000_000  # past this, routes are recomputed (bounded memory)


def _cache(topology: Topology) -> dict:
    return topology.__dict__.setdefault(_CACHE_KEY, {})


def route(topology: Topology, src: str, dst: str) -> tuple[Link, ...]:
    """The links a transfer from device ``src`` to device ``dst`` crosses, in order.

    Args:
        topology: the topology to route on.
        src: name of the sending device.
        dst: name of the receiving device.

    Returns:
        A contiguous tuple of links (``path[i].dst == path[i + 1].src``) from ``src`` to
        ``dst``; empty when ``src == dst``.

    Raises:
        ValueError: ``src`` or ``dst`` is not a device of the topology, or ``dst`` cannot be
            reached from ``src``.
    """
    src_rank = topology.device_index(src)
    dst_rank = topology.device_index(dst)
    return route_ranks(topology, src_rank, dst_rank)


def route_ranks(topology: Topology, src: int, dst: int) -> tuple[Link, ...]:
    """:func:`route` by device rank (position in ``topology.devices``)."""
    for rank in (src, dst):
        if not 0 <= rank < topology.num_devices:
            raise ValueError(
                f"device rank {rank} is out of range for topology {topology.name!r} "
                f"with {topology.num_devices} devices"
            )
    if src == dst:
        return ()
    cache = _cache(topology)
    key = (src, dst)
    path = cache.get(key)
    if path is None:
        path = _torus_route(topology, src, dst) if _is_torus(topology) else None
        if path is None:
            path = _bfs_route(topology, src, dst)
        if len(cache) < _MAX_CACHED_ROUTES:
            cache[key] = path
    return path


def hop_count(topology: Topology, src: str, dst: str) -> int:
    """Number of links on the route from device ``src`` to device ``dst``."""
    return len(route(topology, src, dst))


def _is_torus(topology: Topology) -> bool:
    dims = topology.torus_dims
    if not dims:
        return False
    total = 1
    for size in dims:
        total *= size
    return total == topology.num_devices


def _torus_route(topology: Topology, src: int, dst: int) -> tuple[Link, ...] | None:
    """Dimension-order route; None when a needed neighbour link is missing."""
    wrap = topology.torus_wraparound
    here = list(topology.torus_coords(src))
    goal = topology.torus_coords(dst)
    names = topology.devices
    path = []
    for axis, size in enumerate(topology.torus_dims):
        delta = goal[axis] - here[axis]
        if delta == 0:
            continue
        if wrap[axis]:
            forward = delta % size  # hops going +1
            backward = size - forward  # hops going -1
            step, hops = (1, forward) if forward <= backward else (-1, backward)
        else:
            step, hops = (1, delta) if delta > 0 else (-1, -delta)
        for _ in range(hops):
            current = names[topology.torus_rank(here)].name
            here[axis] = (here[axis] + step) % size
            nxt = names[topology.torus_rank(here)].name
            link = topology.link_between(current, nxt)
            if link is None:
                return None
            path.append(link)
    return tuple(path)


def _bfs_route(topology: Topology, src: int, dst: int) -> tuple[Link, ...]:
    src_name = topology.devices[src].name
    dst_name = topology.devices[dst].name
    predecessors = _cache(topology).get(("bfs", src_name))
    if predecessors is None:
        predecessors = _bfs_tree(topology, src_name)
        _cache(topology)[("bfs", src_name)] = predecessors
    if dst_name not in predecessors:
        raise ValueError(
            f"topology {topology.name!r}: no path of links from {src_name!r} to {dst_name!r}"
        )
    path = []
    node = dst_name
    while node != src_name:
        link = predecessors[node]
        path.append(link)
        node = link.src
    path.reverse()
    return tuple(path)


def _bfs_tree(topology: Topology, source: str) -> dict:
    """For every node reachable from ``source``: the link it was first reached by."""
    predecessors: dict = {source: None}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for link in topology.links_from(node):
            if link.dst not in predecessors:
                predecessors[link.dst] = link
                queue.append(link.dst)
    return predecessors
