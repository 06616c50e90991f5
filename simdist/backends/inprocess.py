"""The in-process transport: the workers of a virtual cluster meet through the worker runner.

The virtual cluster runs its workers in lockstep on the replica runner (one worker thread
at a time, handing over at each cross-worker collective; see
:mod:`simdist.distribute.runner`), so a cross-worker collective is one runner collective:
when every worker has arrived, the plan is executed once with every worker's inputs by the
very executor a single host uses (:func:`simdist.collectives.executor.run_plan`), and each
worker gets its ranks' results. A worker that raises, returns early, or calls something
else stops the cluster with an error naming it, as the runner does for replicas.

Values exchanged on the control plane are deep-copied per worker, so no worker can change
another's copy (as between processes).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist.backends.base import Transport, WorkerFailedError
from simdist.collectives.executor import run_plan as execute_plan
from simdist.collectives.plan import Plan
from simdist.distribute import runner as runner_lib

__all__ = ["InProcessTransport"]


class InProcessTransport(Transport):
    """Worker ``worker_index`` of ``num_workers`` in a virtual cluster driven by ``runner``."""

    def __init__(self, runner: runner_lib.ReplicaRunner, worker_index: int, num_workers: int):
        self._runner = runner
        self._index = worker_index
        self._count = num_workers

    @property
    def num_workers(self) -> int:
        return self._count

    @property
    def worker_index(self) -> int:
        return self._index

    def all_gather_object(self, obj: Any, label: str = "", timeout: float | None = None) -> list:
        def combine(payloads: list) -> list:
            return [copy.deepcopy(list(payloads)) for _ in payloads]

        call = runner_lib.Collective("exchange", (), obj, combine, label=label)
        call.timeout = timeout
        return self._runner.collective(call)

    def run_plan(
        self,
        plan: Plan,
        ranks: Sequence[int],
        flats: Sequence[np.ndarray],
        ufunc: np.ufunc | None,
        timeout: float | None = None,
    ) -> list:
        ranks = [int(r) for r in ranks]
        if len(ranks) != len(flats):
            raise ValueError(f"run_plan got {len(flats)} inputs for {len(ranks)} ranks")
        dtype = flats[0].dtype.name if flats else ""
        signature = (plan.collective, plan.algorithm, plan.num_ranks, plan.elems, dtype)

        def combine(payloads: list) -> list:
            owner: dict[int, np.ndarray] = {}
            for worker, (worker_ranks, worker_flats) in enumerate(payloads):
                for rank, flat in zip(worker_ranks, worker_flats, strict=True):
                    if rank in owner:
                        raise ValueError(f"plan rank {rank} is owned twice (worker {worker})")
                    owner[rank] = flat
            if sorted(owner) != list(range(plan.num_ranks)):
                raise ValueError(
                    f"the workers own plan ranks {sorted(owner)}, not 0..{plan.num_ranks - 1}"
                )
            results = execute_plan(plan, [owner[r] for r in range(plan.num_ranks)], ufunc)
            return [[results[r] for r in worker_ranks] for worker_ranks, _ in payloads]

        call = runner_lib.Collective("run_plan", signature, (ranks, list(flats)), combine)
        call.timeout = timeout
        return self._runner.collective(call)

    def abort(self, message: str) -> None:
        raise WorkerFailedError(message, self._index)
