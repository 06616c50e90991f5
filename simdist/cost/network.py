"""Price a collective's schedule on a topology: the alpha-beta link model with contention.

Each step of a :class:`~simdist.collectives.schedule.Schedule` runs its transfers
concurrently. Every transfer is routed over the topology's directed links; the bytes of all
transfers of the step that cross one link add up, so a link shared by ``k`` transfers of
``s`` bytes is busy ``k * s / bandwidth`` seconds. A transfer takes the sum of the latencies
on its path plus the busiest link's busy time on its path; a step takes its slowest
transfer; the collective takes the sum of its steps (steps are data-dependent, so they do not
overlap). On a fully connected topology with one link per ordered pair this is exactly the
Hockney alpha-beta model used by Thakur, Rabenseifner & Gropp (2005), see
:mod:`simdist.cost.closed_form`.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import numpy as np

from simdist.collectives.schedule import Schedule
from simdist.topology.model import Link, Topology

__all__ = ["CollectiveCost", "price", "price_plan", "price_collective"]


@dataclasses.dataclass(frozen=True)
class CollectiveCost:
    """The predicted cost of one collective call.

    Attributes:
        collective, algorithm, num_ranks, nbytes: copied from the schedule.
        topology: the topology's name.
        step_times: seconds of each step, in order.
        time: seconds of the whole collective (the sum of ``step_times``).
        link_bytes: ``(link, bytes)`` for every link that carried data, in the topology's
            link order; bytes are summed over all steps.
        link_busy: ``(link, seconds)`` likewise: the time each link spent transmitting.
        bottleneck: the busiest link (largest busy time), or None when nothing moved.
    """

    collective: str
    algorithm: str
    num_ranks: int
    nbytes: int
    topology: str
    step_times: tuple[float, ...]
    time: float
    link_bytes: tuple[tuple[Link, int], ...]
    link_busy: tuple[tuple[Link, float], ...]
    bottleneck: Link | None

    @property
    def bottleneck_busy(self) -> float:
        """Seconds the bottleneck link spent transmitting (0.0 when nothing moved)."""
        return max((busy for _, busy in self.link_busy), default=0.0)


def _rank_devices(schedule: Schedule, topology: Topology, ranks: Sequence[int] | None):
    if ranks is None:
        if schedule.num_ranks > topology.num_devices:
            raise ValueError(
                f"the schedule has {schedule.num_ranks} ranks but topology "
                f"{topology.name!r} has only {topology.num_devices} devices; use a larger "
                "topology or fewer ranks"
            )
        ranks = range(schedule.num_ranks)
    ranks = [int(r) for r in ranks]
    if len(ranks) != schedule.num_ranks:
        raise ValueError(
            f"ranks lists {len(ranks)} devices but the schedule has {schedule.num_ranks} ranks"
        )
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks must name distinct devices, got {ranks}")
    for r in ranks:
        if not 0 <= r < topology.num_devices:
            raise ValueError(
                f"rank device index {r} is outside topology {topology.name!r}'s "
                f"{topology.num_devices} devices"
            )
    return ranks


def price(
    schedule: Schedule, topology: Topology, ranks: Sequence[int] | None = None
) -> CollectiveCost:
    """Predict how long ``schedule`` takes on ``topology``.

    Args:
        schedule: the collective's steps of transfers (ranks ``0 .. p-1``).
        topology: where it runs.
        ranks: the device index (into ``topology.devices``) of each rank; by default rank
            ``r`` runs on device ``r``.

    Returns:
        A :class:`CollectiveCost` with per-step times, bytes and busy time per link, and the
        bottleneck link.

    Raises:
        ValueError: more ranks than devices, or a ``ranks`` list of the wrong length, with
            duplicates, or out of range; a transfer between unconnected devices (raised by
            the router).
    """
    from simdist.topology.routing import route_ranks

    devices = _rank_devices(schedule, topology, ranks)
    num_links = len(topology.links)
    link_index: dict[Link, int] = {}
    for i, link in enumerate(topology.links):
        link_index.setdefault(link, i)
    bandwidth = np.array([link.bandwidth for link in topology.links], dtype=np.float64)
    paths: dict[tuple[int, int], tuple[np.ndarray, float]] = {}
    total_bytes = np.zeros(num_links, dtype=np.float64)
    step_times = []
    for step in schedule.steps:
        path_list, lengths, sizes, latencies = [], [], [], []
        for transfer in step:
            if transfer.nbytes <= 0 or transfer.src == transfer.dst:
                continue
            key = (transfer.src, transfer.dst)
            path = paths.get(key)
            if path is None:
                hops = route_ranks(topology, devices[transfer.src], devices[transfer.dst])
                indices = np.array([link_index[link] for link in hops], dtype=np.intp)
                path = paths[key] = (indices, float(sum(link.latency for link in hops)))
            path_list.append(path[0])
            lengths.append(len(path[0]))
            sizes.append(transfer.nbytes)
            latencies.append(path[1])
        if not path_list:
            step_times.append(0.0)
            continue
        flat = np.concatenate(path_list)
        weights = np.repeat(np.asarray(sizes, dtype=np.float64), lengths)
        load = np.bincount(flat, weights=weights, minlength=num_links)
        total_bytes += load
        busy = load / bandwidth
        starts = np.zeros(len(lengths), dtype=np.intp)
        np.cumsum(lengths[:-1], out=starts[1:])
        slowest = np.maximum.reduceat(busy[flat], starts)
        step_times.append(float(np.max(np.asarray(latencies) + slowest)))
    used = np.flatnonzero(total_bytes)
    busy_total = total_bytes / bandwidth
    link_bytes = tuple((topology.links[i], int(total_bytes[i])) for i in used)
    link_busy = tuple((topology.links[i], float(busy_total[i])) for i in used)
    bottleneck = topology.links[int(used[np.argmax(busy_total[used])])] if used.size else None
    return CollectiveCost(
        collective=schedule.collective,
        algorithm=schedule.algorithm,
        num_ranks=schedule.num_ranks,
        nbytes=schedule.nbytes,
        topology=topology.name,
        step_times=tuple(step_times),
        time=float(sum(step_times)),
        link_bytes=link_bytes,
        link_busy=link_busy,
        bottleneck=bottleneck,
    )


def _device_paths(topology: Topology) -> dict:
    """Per topology: ``(src device, dst device) -> (link indices, latency)``, cached."""
    return topology.__dict__.setdefault("_simdist_cost_paths", {})


def _path(topology: Topology, link_index: dict, src: int, dst: int):
    from simdist.topology.routing import route_ranks

    cache = _device_paths(topology)
    path = cache.get((src, dst))
    if path is None:
        direct = _torus_neighbours(topology).get((src, dst))
        if direct is not None:  # a torus route to a neighbour is its first link (routing.py)
            link = topology.links[direct]
            path = (np.array([direct], dtype=np.intp), float(link.latency))
        else:
            hops = route_ranks(topology, src, dst)
            indices = np.array([link_index[link] for link in hops], dtype=np.intp)
            path = (indices, float(sum(link.latency for link in hops)))
        cache[(src, dst)] = path
    return path


def _torus_neighbours(topology: Topology) -> dict:
    """Per torus: ``(src rank, dst rank) -> index of the first direct link``, cached."""
    table = topology.__dict__.get("_simdist_cost_torus_links")
    if table is None:
        table = {}
        if topology.torus_dims:
            position = {d.name: r for r, d in enumerate(topology.devices)}
            for i, link in enumerate(topology.links):
                a, b = position.get(link.src), position.get(link.dst)
                if a is not None and b is not None:
                    table.setdefault((a, b), i)
        topology.__dict__["_simdist_cost_torus_links"] = table
    return table


def price_plan(
    plan, topology: Topology, ranks: Sequence[int] | None = None, itemsize: int = 1
) -> CollectiveCost:
    """:func:`price` of ``plan.to_schedule(itemsize)``, computed from the plan's arrays.

    The same arithmetic as :func:`price` in the same order (so the same result) without
    building one Python object per message: a step's moves become arrays, each distinct
    (source, destination) pair is routed once per topology, and link loads are summed with
    ``numpy.bincount``. This is what keeps planning and pricing a 4,096-chip torus
    all-reduce under a second.

    Raises:
        ValueError: as :func:`price`.
    """
    dummy = Schedule(plan.collective, plan.algorithm, plan.num_ranks, 0, ())
    devices = np.asarray(_rank_devices(dummy, topology, ranks), dtype=np.intp)
    num_links = len(topology.links)
    link_index: dict[Link, int] = topology.__dict__.get("_simdist_cost_link_index")
    if link_index is None:
        link_index = {}
        for i, link in enumerate(topology.links):
            link_index.setdefault(link, i)
        topology.__dict__["_simdist_cost_link_index"] = link_index
    bandwidth = np.array([link.bandwidth for link in topology.links], dtype=np.float64)
    seg_bytes = np.array([(b - a) * itemsize for a, b in plan.segments], dtype=np.int64)
    counts = [len(step) for step in plan.steps]
    num_steps = len(counts)
    total_bytes = np.zeros(num_links, dtype=np.float64)
    step_times = [0.0] * num_steps
    if sum(counts):
        total = sum(counts)
        fields = itertools.chain.from_iterable(itertools.chain.from_iterable(plan.steps))
        moves = np.fromiter(fields, dtype=np.int64, count=5 * total).reshape(total, 5)
        step_of = np.repeat(np.arange(num_steps, dtype=np.intp), counts)
        src, dst = devices[moves[:, 0]], devices[moves[:, 1]]
        sizes = seg_bytes[moves[:, 2]]
        keep = (sizes > 0) & (src != dst)
        src, dst, sizes, step_of = src[keep], dst[keep], sizes[keep], step_of[keep]
    else:
        src = np.zeros(0, dtype=np.intp)
    if src.size:
        # route each distinct (source, destination) pair once; paths as one CSR table
        width = int(topology.num_devices)
        pairs, inverse = np.unique(src * width + dst, return_inverse=True)
        paths = [_path(topology, link_index, int(k // width), int(k % width)) for k in pairs]
        path_len = np.array([len(p[0]) for p in paths], dtype=np.intp)
        path_off = np.zeros(len(paths), dtype=np.intp)
        np.cumsum(path_len[:-1], out=path_off[1:])
        path_links = np.concatenate([p[0] for p in paths])
        path_lat = np.array([p[1] for p in paths], dtype=np.float64)
        move_len = path_len[inverse]
        move_start = np.zeros(len(move_len), dtype=np.intp)
        np.cumsum(move_len[:-1], out=move_start[1:])
        ramp = np.arange(int(move_len.sum()), dtype=np.intp) - np.repeat(move_start, move_len)
        flat = path_links[np.repeat(path_off[inverse], move_len) + ramp]
        flat_step = np.repeat(step_of, move_len)
        weights = np.repeat(sizes.astype(np.float64), move_len)
        # per step and link: the bytes of the step's moves that cross it, in move order
        load = np.bincount(
            flat_step * num_links + flat, weights=weights, minlength=num_steps * num_links
        ).reshape(num_steps, num_links)
        for row in load:
            total_bytes += row
        busy = load / bandwidth
        slowest = np.maximum.reduceat(busy[flat_step, flat], move_start)
        finish = path_lat[inverse] + slowest
        present = np.flatnonzero(np.bincount(step_of, minlength=num_steps))
        first = np.searchsorted(step_of, present)
        for s_index, value in zip(present.tolist(), np.maximum.reduceat(finish, first).tolist(),
                                  strict=True):  # fmt: skip
            step_times[s_index] = float(value)
    used = np.flatnonzero(total_bytes)
    busy_total = total_bytes / bandwidth
    return CollectiveCost(
        collective=plan.collective,
        algorithm=plan.algorithm,
        num_ranks=plan.num_ranks,
        nbytes=plan.elems * itemsize,
        topology=topology.name,
        step_times=tuple(step_times),
        time=float(sum(step_times)),
        link_bytes=tuple((topology.links[i], int(total_bytes[i])) for i in used),
        link_busy=tuple((topology.links[i], float(busy_total[i])) for i in used),
        bottleneck=topology.links[int(used[np.argmax(busy_total[used])])] if used.size else None,
    )


def _rank_topology(topology: Topology, devices: list[int]) -> Topology:
    """The topology the collective's planner sees: the chosen devices in rank order.

    The planner reads hosts, switches and torus shape from it (the selector, hierarchical and
    ring_per_dimension); pricing still routes over the whole topology. Cached per topology.
    """
    if devices == list(range(topology.num_devices)):
        return topology
    cache = topology.__dict__.setdefault("_simdist_cost_rank_topologies", {})
    key = tuple(devices)
    if key not in cache:
        chosen = tuple(topology.devices[r] for r in devices)
        names = {d.name for d in chosen} | {s.name for s in topology.switches}
        cache[key] = dataclasses.replace(
            topology,
            name=f"{topology.name}[{len(devices)} devices]",
            devices=chosen,
            links=tuple(x for x in topology.links if x.src in names and x.dst in names),
            torus_dims=(),
        )
    return cache[key]


def price_collective(
    collective: str,
    algorithm: str,
    num_ranks: int,
    nbytes: int,
    topology: Topology,
    ranks: Sequence[int] | None = None,
    itemsize: int = 1,
) -> CollectiveCost:
    """Build the collective's schedule (``simdist.collectives``) and :func:`price` it.

    Args:
        collective: ``"all_reduce"``, ``"reduce_scatter"``, ``"all_gather"``, ``"broadcast"``,
            ``"reduce"`` or ``"all_to_all"``.
        algorithm: an algorithm name, or ``"auto"`` for the collectives' selector (which
            sees the chosen devices: their hosts, switches and torus shape).
        num_ranks: how many ranks take part.
        nbytes: bytes of each rank's input buffer, as the schedule counts them.
        topology: where it runs.
        ranks: the device index of each rank (default ``0 .. num_ranks-1``).
        itemsize: bytes per element (pieces are cut in whole elements).

    Returns:
        The :class:`CollectiveCost`.

    Raises:
        ValueError: an unknown collective or algorithm, or ranks that do not fit (raised by
            the schedule builder or :func:`price`).
    """
    from simdist.collectives.algorithms import build_plan
    from simdist.collectives.api import make_spec

    if ranks is None:
        if num_ranks > topology.num_devices:
            raise ValueError(
                f"{num_ranks} ranks do not fit topology {topology.name!r} with "
                f"{topology.num_devices} devices; use a larger topology or fewer ranks"
            )
        ranks = range(num_ranks)
    devices = [int(r) for r in ranks]
    planner_view = _rank_topology(topology, devices)
    chosen = None if algorithm == "auto" else algorithm
    if nbytes < 0 or itemsize < 1 or nbytes % itemsize:
        raise ValueError(f"nbytes={nbytes} must be a non-negative multiple of itemsize={itemsize}")
    spec = make_spec(
        collective, chosen, num_ranks, nbytes // itemsize, nbytes=nbytes, topology=planner_view
    )
    return price_plan(build_plan(spec), topology, devices, itemsize)
