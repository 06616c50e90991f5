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
from collections.abc import Sequence

import numpy as np

from simdist.collectives.schedule import Schedule
from simdist.topology.model import Link, Topology

__all__ = ["CollectiveCost", "price"]


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
    from simdist.collectives.api import schedule as build_schedule

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
    plan = build_schedule(
        collective, chosen, num_ranks, nbytes, topology=planner_view, itemsize=itemsize
    )
    return price(plan, topology, devices)
