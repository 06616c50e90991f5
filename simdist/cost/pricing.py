"""One entry point that picks the model: NCCL's tuning model on GPU systems, else the schedule.

``algorithm`` names the model as well as the algorithm:

* ``"auto"``: NCCL's own choice (:mod:`simdist.cost.nccl`) when the topology carries a
  :class:`~simdist.topology.GpuSystem` and NCCL prices the collective and rank count (whole
  nodes or part of one), else the collectives' selector priced by the alpha-beta schedule
  model (:mod:`simdist.cost.network`: TPU tori, ASTRA-sim networks, all-to-all);
* ``"nccl"`` or ``"nccl:ring"``, ``"nccl:tree"``, ``"nccl:nvls"``, ``"nccl:nvls_tree"``:
  NCCL's model, its choice or the named algorithm (as ``NCCL_ALGO``); an error where it
  does not apply;
* any other name: that ``simdist.collectives`` schedule, priced link by link.
"""

from __future__ import annotations

import dataclasses

from simdist.cost.nccl import NCCL_COLLECTIVES, NcclEstimate, nccl_estimate
from simdist.cost.network import CollectiveCost, price_collective
from simdist.topology.model import Link, Topology

__all__ = ["PricedCall", "price_call"]


@dataclasses.dataclass(frozen=True)
class PricedCall:
    """A collective's predicted seconds, the model and algorithm behind it, and its detail."""

    time: float
    algorithm: str  # printed: "nccl:ring/LL128" or a schedule algorithm's name
    model: str  # "nccl" or "schedule"
    detail: CollectiveCost | NcclEstimate

    @property
    def link_busy(self) -> tuple[tuple[Link, float], ...]:
        """Busy seconds per link (schedule model only; NCCL's model has no links)."""
        return self.detail.link_busy if isinstance(self.detail, CollectiveCost) else ()


def _nccl_applies(collective: str, num_ranks: int, topology: Topology) -> bool:
    system = topology.system
    if system is None or collective not in NCCL_COLLECTIVES or num_ranks > system.num_gpus:
        return False
    return num_ranks <= system.gpus_per_node or num_ranks % system.gpus_per_node == 0


def price_call(
    collective: str,
    algorithm: str,
    num_ranks: int,
    nbytes: int,
    topology: Topology,
    itemsize: int = 1,
    protocol: str = "auto",
    total_bytes: int | None = None,
) -> PricedCall:
    """Price one collective call with the model ``algorithm`` names (see the module doc).

    Args:
        collective, num_ranks, topology, itemsize: as :func:`simdist.cost.price_collective`.
        algorithm: ``"auto"``, ``"nccl"``, ``"nccl:<algo>"`` or a schedule algorithm.
        nbytes: bytes of each rank's input buffer (the schedule's count).
        protocol: NCCL protocol (``auto``, ``LL``, ``LL128``, ``Simple``); NCCL model only.
        total_bytes: the whole buffer as nccl-tests counts it (default ``nbytes``; give it
            for all-gather, whose input is ``1/p`` of it).

    Raises:
        ValueError: an unknown name, or NCCL's model asked for where it does not apply.
    """
    whole = nbytes if total_bytes is None else total_bytes
    wants_nccl = algorithm == "nccl" or algorithm.startswith("nccl:")
    if wants_nccl and topology.system is None:
        raise ValueError(
            f"topology {topology.name!r} describes no GPU system, so NCCL's model does not "
            "apply; use --algo auto or a schedule algorithm"
        )
    if protocol != "auto" and not (wants_nccl or algorithm == "auto"):
        raise ValueError("a protocol applies to NCCL's model only; use --algo nccl or auto")
    if wants_nccl or (algorithm == "auto" and _nccl_applies(collective, num_ranks, topology)):
        nccl_algo = algorithm.partition(":")[2] or "auto"
        estimate = nccl_estimate(
            collective, int(whole), topology.system, num_ranks, nccl_algo, protocol
        )
        label = f"nccl:{estimate.algorithm}/{estimate.protocol}"
        return PricedCall(estimate.time, label, "nccl", estimate)
    if protocol != "auto":
        raise ValueError(
            f"NCCL's model does not apply to {collective} on {num_ranks} ranks of "
            f"{topology.name!r}, so --proto {protocol} has no meaning there"
        )
    cost = price_collective(collective, algorithm, num_ranks, nbytes, topology, itemsize=itemsize)
    return PricedCall(cost.time, cost.algorithm, "schedule", cost)
