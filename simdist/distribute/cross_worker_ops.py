"""``CollectiveAllReduce``: the cross-device ops of a multi-worker strategy.

Every worker holds its local replicas' arrays; an all-reduce is one
:mod:`simdist.collectives` plan over all workers' ranks (worker ``w`` owns ranks
``w*L .. w*L + L - 1``), executed by the worker's transport with the executor's arithmetic,
so the virtual cluster and an MPI run give the same bits. Before each cross-worker
operation the workers exchange a tag saying what they are about to do
(:meth:`CollectiveAllReduce.exchange`); a worker in a different call stops every worker with
``CollectiveMismatchError`` instead of a hang or silently mixed data.

Algorithms (``CommunicationOptions.implementation``): ``RING``: a ring over all ranks in
worker-major order; ``NCCL`` and ``AUTO``: ``hierarchical`` (reduce-scatter within each
worker, all-reduce across workers, all-gather within) when workers have several devices;
otherwise ``NCCL`` is a ring and ``AUTO`` the size-based selector of
:func:`simdist.collectives.select_algorithm`.
``SIMDIST_FORCE_ALL_REDUCE`` (:mod:`simdist.collectives.forced`) overrides them all;
forced ``exact`` gathers every rank's array on every worker and sums them exactly.
"""

from __future__ import annotations

import numpy as np

from simdist import collectives
from simdist.collectives.algorithms import build_plan
from simdist.collectives.api import make_spec
from simdist.collectives.forced import EXACT, forced_all_reduce
from simdist.core import profile_hook
from simdist.distribute.collective_util import CommunicationImplementation
from simdist.distribute.cross_device_ops import CrossDeviceOps, _check_same, _mean
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.runner import CollectiveMismatchError

__all__ = ["CollectiveAllReduce"]


class CollectiveAllReduce(CrossDeviceOps):
    """All-reduce of every worker's replicas as one plan over all ranks (see module docstring).

    Args:
        transport: the worker's transport.
        num_local: replicas on each worker.
        implementation: a ``CommunicationImplementation``.
        timeout: the deadline of each cross-worker call in seconds
            (``CommunicationOptions.timeout_seconds``; ``None``: the transport's).
    """

    def __init__(self, transport, num_local: int, implementation, timeout=None) -> None:
        self._transport = transport
        self._timeout = timeout
        self._num_local = num_local
        self._implementation = implementation
        self._plans: dict = {}

    @property
    def num_ranks(self) -> int:
        return self._transport.num_workers * self._num_local

    def exchange(self, tag, payload=None) -> list:
        """Every worker's ``payload``, after checking that every worker called with ``tag``.

        Raises:
            CollectiveMismatchError: another worker is in a different cross-worker call.
        """
        gathered = self._transport.all_gather_object(
            (tag, payload), label=str(tag), timeout=self._timeout
        )
        tags = [t for t, _ in gathered]
        for worker, other in enumerate(tags):
            if other != tags[0]:
                lines = "\n".join(f"  worker {w}: {t}" for w, t in enumerate(tags))
                raise CollectiveMismatchError(
                    f"Workers made different cross-worker calls: worker 0 is in {tags[0]}, "
                    f"worker {worker} is in {other}. Every worker must run the same program "
                    "and make the same collective calls (reductions, variable creation, "
                    "metric reads, saves) with the same shapes, in the same order.\n" + lines
                )
        return [p for _, p in gathered]

    def algorithm(self, nbytes: int) -> tuple[str | None, dict]:
        """The all-reduce algorithm (and its arguments) for a message of ``nbytes``."""
        workers, local = self._transport.num_workers, self._num_local
        forced = forced_all_reduce()  # SIMDIST_FORCE_ALL_REDUCE wins
        if forced is not None:
            return forced, ({"ranks_per_node": local} if forced == "hierarchical" else {})
        impl = self._implementation
        if impl is CommunicationImplementation.RING:
            return "ring", {}
        if workers > 1 and local > 1:
            return "hierarchical", {"ranks_per_node": local}
        return ("ring" if impl is CommunicationImplementation.NCCL else None), {}

    def all_reduce_flat(self, flats: list[np.ndarray], op: str = "sum") -> np.ndarray:
        """The cross-worker all-reduce of this worker's flat arrays (one per local replica).

        The callers have already agreed on shapes through :meth:`exchange`.
        """
        first = flats[0]
        if first.size == 0:
            return first.copy()
        algorithm, kwargs = self.algorithm(first.nbytes)
        if algorithm == EXACT and op == "sum":
            return self._exact_sum(flats)
        if algorithm == EXACT:  # max / min: the same in every order
            algorithm, kwargs = "ring", {}
        key = (algorithm, self.num_ranks, first.size, first.dtype.itemsize)
        plan = self._plans.get(key)
        if plan is None:
            spec = make_spec(
                "all_reduce", algorithm, self.num_ranks, first.size, nbytes=first.nbytes, **kwargs
            )
            plan = self._plans[key] = build_plan(spec)
        profile_hook.record_collective("all_reduce", flats, plan.algorithm)
        offset = self._transport.worker_index * self._num_local
        ranks = range(offset, offset + self._num_local)
        ufunc = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op]
        return self._transport.run_plan(plan, ranks, flats, ufunc, timeout=self._timeout)[0]

    def _exact_sum(self, flats: list[np.ndarray]) -> np.ndarray:
        """The correctly rounded exact sum over every rank: each worker gathers every rank's
        array (global rank order) and sums them exactly, so every worker gets the same bits."""
        profile_hook.record_collective("all_reduce", flats, EXACT)
        gathered = self._transport.all_gather_object(
            [np.asarray(f) for f in flats], label="exact all-reduce", timeout=self._timeout
        )
        every_rank = [flat for worker in gathered for flat in worker]
        return collectives.reduce_arrays("sum", every_rank, "ring", reproducible=True)

    def reduce_arrays(self, reduce_op, arrays: list[np.ndarray]) -> np.ndarray:
        """SUM or MEAN over every worker's replicas of same-shape arrays.

        Raises:
            InvalidArgumentError: shapes or dtypes differ between local replicas.
            CollectiveMismatchError: another worker reduces something else.
        """
        op = ReduceOp.from_value(reduce_op)
        arrays = [np.asarray(a) for a in arrays]
        _check_same(arrays)
        first = arrays[0]
        self.exchange(("all_reduce", op.name, first.shape, first.dtype.name))
        total = self.all_reduce_flat([a.reshape(-1) for a in arrays]).reshape(first.shape)
        return _mean(total, self.num_ranks) if op is ReduceOp.MEAN else total

    def __repr__(self) -> str:
        return f"CollectiveAllReduce(implementation={self._implementation.name})"
