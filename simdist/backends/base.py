"""The transport interface: how the workers of one cluster reach each other.

A *worker* is one task of a multi-worker cluster (a thread group under
:func:`simdist.sim.launch`, or one process under ``mpiexec``). Each worker owns some of a
collective plan's ranks (its local replicas, numbered globally: worker ``w`` with ``L``
local devices owns ranks ``w*L .. w*L + L - 1``). A transport offers two planes:

* the control plane, :meth:`Transport.all_gather_object`: small Python values (signatures,
  shapes, flags) from every worker, in worker order;
* the data plane, :meth:`Transport.run_plan`: a :class:`~simdist.collectives.plan.Plan`
  executed across the workers with the same arithmetic, in the same order, as
  :func:`simdist.collectives.executor.run_plan` on one host, so every transport gives
  bit-identical results (determinism contract, rule 3).

A worker that fails must stop every other worker with :class:`WorkerFailedError` naming it,
within a bounded time, never a hang.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist import errors
from simdist.collectives.plan import Plan

__all__ = ["Transport", "WorkerFailedError", "LocalTransport"]


class WorkerFailedError(errors.UnavailableError):
    """Another worker of the cluster raised, died or left; this worker cannot go on.

    Attributes:
        worker: the index of the worker that failed (``None`` when unknown).
    """

    def __init__(self, message: str, worker: int | None = None) -> None:
        super().__init__(None, None, message)
        self.worker = worker


class Transport(abc.ABC):
    """One worker's connection to the other workers of its cluster.

    Every method that meets the other workers must be called by every worker, in the same
    order; the caller (the multi-worker strategy) checks signatures on the control plane
    before each data-plane call, so a divergence is reported, not hung on.
    """

    @property
    @abc.abstractmethod
    def num_workers(self) -> int:
        """Workers in the cluster."""

    @property
    @abc.abstractmethod
    def worker_index(self) -> int:
        """This worker's index in ``[0, num_workers)``."""

    @abc.abstractmethod
    def all_gather_object(self, obj: Any, label: str = "", timeout: float | None = None) -> list:
        """Every worker's ``obj`` (small: the values :mod:`simdist.backends.wire` carries), in
        worker order; every worker gets it.

        ``label`` says what the exchange is for, in error messages only; ``timeout`` is the
        deadline in seconds (``None``: the transport's, from ``SIMDIST_WORKER_TIMEOUT``).

        Raises:
            WorkerFailedError: another worker failed before or while it was exchanged.
            DeadlineExceededError: a worker did not arrive within the transport's deadline.
        """

    @abc.abstractmethod
    def run_plan(
        self,
        plan: Plan,
        ranks: Sequence[int],
        flats: Sequence[np.ndarray],
        ufunc: np.ufunc | None,
        timeout: float | None = None,
    ) -> list:
        """Execute ``plan`` across the workers; this worker owns plan ranks ``ranks``.

        Args:
            plan: the collective's plan over all workers' ranks.
            ranks: the plan ranks this worker owns (ascending); their union over workers is
                ``range(plan.num_ranks)``.
            flats: this worker's inputs, one flat array per entry of ``ranks``.
            ufunc: the reduction (``np.add`` ...), ``None`` for copy-only plans.
            timeout: the deadline in seconds (``None``: the transport's).

        Returns:
            Per entry of ``ranks``, that rank's result: bitwise what
            ``executor.run_plan(plan, all_flats, ufunc)[rank]`` gives.
        """

    @abc.abstractmethod
    def abort(self, message: str) -> None:
        """Stop every worker of the cluster (this one raises or exits afterwards)."""

    def barrier(self) -> None:
        """Wait until every worker arrives."""
        self.all_gather_object(None)

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Leave the cluster (no more calls)."""


class LocalTransport(Transport):
    """The one-worker cluster: every call returns at once (no peers)."""

    @property
    def num_workers(self) -> int:
        return 1

    @property
    def worker_index(self) -> int:
        return 0

    def all_gather_object(self, obj: Any, label: str = "", timeout: float | None = None) -> list:
        return [obj]

    def run_plan(self, plan, ranks, flats, ufunc, timeout: float | None = None) -> list:
        from simdist.collectives.executor import run_plan

        if list(ranks) != list(range(plan.num_ranks)):
            raise ValueError(
                f"a one-worker cluster owns every rank of the plan, got ranks {list(ranks)} "
                f"of {plan.num_ranks}"
            )
        return run_plan(plan, list(flats), ufunc)

    def abort(self, message: str) -> None:
        raise WorkerFailedError(message, 0)
