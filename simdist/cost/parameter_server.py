"""Price one parameter-server training step: pull variables from the ps, push gradients back.

The model of one step in which every worker runs at once (the worst case of asynchronous
training, and the steady state when workers are equally fast):

1. pull: every ps task sends each worker the variables it holds (all workers at once);
2. compute: ``compute_time`` seconds on every worker (given by the caller, e.g. from
   ``simdist.cost.price_step``'s compute part);
3. push: every worker sends each ps task the gradients of that ps's variables.

Both transfers are priced by ``simdist.cost.network.price`` on a topology whose devices are
the workers (ranks ``0..W-1``) then the ps tasks (ranks ``W..W+P-1``); by default a
non-blocking switch with one NIC link per task, so a ps's link carries ``W`` times its share
of the model and is the bottleneck: more ps tasks (or sharding a large variable over them)
shorten the step. Variables are placed as ``ParameterServerStrategy`` places them:
round-robin in creation order, each shard of a sharded variable counting as one variable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from simdist.collectives.schedule import Schedule, Transfer
from simdist.cost.network import CollectiveCost, price
from simdist.topology.builders import switch
from simdist.topology.model import Link, Topology

__all__ = ["PSStepCost", "place_round_robin", "price_ps_step"]


@dataclasses.dataclass(frozen=True)
class PSStepCost:
    """Predicted seconds of one step, split into pull, compute and push.

    Attributes:
        ps_bytes: bytes held by each ps task.
        pull, push: the priced transfers (``bottleneck`` names the busiest link).
        compute_time: seconds of compute per step (as given).
        time: ``pull.time + compute_time + push.time``.
    """

    num_workers: int
    num_ps: int
    ps_bytes: tuple[int, ...]
    pull: CollectiveCost
    push: CollectiveCost
    compute_time: float
    time: float

    @property
    def bottleneck(self) -> Link | None:
        """The busiest link of the slower transfer."""
        slower = self.pull if self.pull.time >= self.push.time else self.push
        return slower.bottleneck


def place_round_robin(variable_bytes: Sequence[int], num_ps: int) -> tuple[int, ...]:
    """Bytes per ps task when variables (or shards) of these sizes are placed round-robin.

    >>> place_round_robin([400, 40, 400, 40], 2)
    (800, 80)
    """
    held = [0] * num_ps
    for i, nbytes in enumerate(variable_bytes):
        held[i % num_ps] += int(nbytes)
    return tuple(held)


def _transfers(num_workers: int, ps_bytes: Sequence[int], pull: bool) -> tuple[Transfer, ...]:
    out = []
    for p, nbytes in enumerate(ps_bytes):
        for w in range(num_workers):
            src, dst = (num_workers + p, w) if pull else (w, num_workers + p)
            out.append(Transfer(src, dst, nbytes, chunk=p))
    return tuple(out)


def price_ps_step(
    variable_bytes: Sequence[int],
    num_workers: int,
    num_ps: int,
    *,
    bandwidth: float = 12.5e9,
    latency: float = 5e-6,
    compute_time: float = 0.0,
    topology: Topology | None = None,
) -> PSStepCost:
    """Predict one step's time with the ps links as the bottleneck they are.

    Args:
        variable_bytes: bytes of each variable (or shard), in creation order.
        num_workers: workers pulling and pushing at once.
        num_ps: ps tasks holding the variables round-robin.
        bandwidth: bytes/s of each task's link when ``topology`` is None (default 100 Gb/s).
        latency: seconds per link when ``topology`` is None.
        compute_time: seconds of compute per step.
        topology: where the tasks run (workers first, then ps); default a switch.

    Returns:
        A :class:`PSStepCost`.

    Raises:
        ValueError: fewer than one worker or ps, a negative size or compute time, or a
            topology with fewer devices than tasks.
    """
    if num_workers < 1 or num_ps < 1:
        raise ValueError(f"Need at least one worker and one ps, got {num_workers} and {num_ps}.")
    if any(b < 0 for b in variable_bytes) or compute_time < 0:
        raise ValueError("variable sizes and compute_time must be non-negative.")
    tasks = num_workers + num_ps
    if topology is None:
        topology = switch(tasks, bandwidth, latency, name=f"ps-cluster-{num_workers}w{num_ps}ps")
    ps_bytes = place_round_robin(variable_bytes, num_ps)
    total = sum(ps_bytes)
    costs = []
    for pull in (True, False):
        schedule = Schedule(
            "ps_pull" if pull else "ps_push",
            "parameter_server",
            tasks,
            total,
            (_transfers(num_workers, ps_bytes, pull),),
        )
        costs.append(price(schedule, topology))
    time = costs[0].time + compute_time + costs[1].time
    return PSStepCost(num_workers, num_ps, ps_bytes, costs[0], costs[1], compute_time, time)
