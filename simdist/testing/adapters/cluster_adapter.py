"""The multi-worker operations of an adapter, in terms of one hook: run a program on a cluster.

:class:`ClusterAdapter` implements every ``multi_worker_*`` operation and ``auto_shard`` of
the Adapter interface by running a worker program of
:mod:`simdist.testing.adapters.worker_program` on each worker of a W x L cluster. A
subclass supplies :meth:`ClusterAdapter.run_on_cluster` (simdist: ``simdist.sim.launch``;
TensorFlow: local processes).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist.testing.adapters.base import Adapter


def devices_per_worker(per_replica: Sequence[Any], workers: int) -> int:
    """L of a per-replica value over ``workers`` workers (W*L values, worker-major).

    Raises:
      ValueError: the value's length is not a positive multiple of ``workers``.
    """
    if workers < 1 or not per_replica or len(per_replica) % workers:
        raise ValueError(
            f"{len(per_replica)} per-replica values do not fill {workers} workers evenly; "
            "give W*L values in global replica order"
        )
    return len(per_replica) // workers


def write_lines(directory: str, file_lines: Sequence[np.ndarray]) -> list[str]:
    """Writes one text file per array (one value a line) under ``directory``; their paths."""
    paths = []
    for i, lines in enumerate(file_lines):
        path = os.path.join(directory, f"part-{i:03d}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(f"{int(v)}\n" for v in np.asarray(lines).tolist()))
        paths.append(path)
    return paths


class ClusterAdapter(Adapter):
    """Multi-worker operations through ``run_on_cluster`` (mix in before the base adapter)."""

    def run_on_cluster(
        self, workers: int, devices_per_worker: int, program: str, kwargs: dict
    ) -> list[Any]:
        """Runs worker program ``program`` with ``kwargs`` on every worker of a cluster.

        Returns:
          Each worker's result, worker order.
        """
        raise NotImplementedError

    def _check_shape(self, workers: int, local: int) -> None:
        if not self.min_workers <= workers <= self.max_workers:
            raise ValueError(
                f"{workers} workers asked of an adapter for {self.min_workers}..{self.max_workers}"
            )
        if not 1 <= local <= self.max_devices_per_worker:
            raise ValueError(
                f"{local} replicas per worker asked of an adapter for at most "
                f"{self.max_devices_per_worker}"
            )

    def _on_values(self, program: str, per_replica, workers: int, **kwargs) -> list[Any]:
        local = devices_per_worker(per_replica, workers)
        self._check_shape(workers, local)
        values = [np.asarray(v) for v in per_replica]
        return self.run_on_cluster(workers, local, program, {"values": values, **kwargs})

    def multi_worker_reduce(self, op, per_replica, workers, axis):
        return self._on_values("reduce", per_replica, workers, op=op, axis=axis)

    def multi_worker_all_reduce(self, op, per_replica, workers):
        return self._on_values("all_reduce", per_replica, workers, op=op)

    def multi_worker_gather(self, per_replica, workers, axis):
        return self._on_values("gather", per_replica, workers, axis=axis)

    def multi_worker_local_results(self, per_replica, workers):
        return self._on_values("local_results", per_replica, workers)

    def multi_worker_replica_ids(self, workers, devices_per_worker):
        self._check_shape(workers, devices_per_worker)
        return self.run_on_cluster(workers, devices_per_worker, "replica_ids", {})

    def auto_shard(self, policy, spec, workers, devices_per_worker):
        self._check_shape(workers, devices_per_worker)
        kwargs = {
            "policy": policy,
            "global_batch_size": spec.global_batch_size,
            "drop_remainder": spec.drop_remainder,
        }
        if spec.file_lines is None:
            kwargs.update(elements=np.asarray(spec.elements, np.int64), paths=None)
            per_worker = self.run_on_cluster(workers, devices_per_worker, "auto_shard", kwargs)
        else:
            with tempfile.TemporaryDirectory(prefix="simdist-conformance-") as directory:
                kwargs.update(elements=None, paths=write_lines(directory, spec.file_lines))
                per_worker = self.run_on_cluster(workers, devices_per_worker, "auto_shard", kwargs)
        counts = {len(steps) for steps in per_worker}
        if len(counts) > 1:
            raise AssertionError(
                f"the workers iterated different step counts: {[len(s) for s in per_worker]}"
            )
        steps = counts.pop() if counts else 0
        return [[per_worker[w][s] for w in range(workers)] for s in range(steps)]

    def multi_worker_train_step(self, params, per_replica_x, per_replica_y, lr, gbs, workers):
        local = devices_per_worker(per_replica_x, workers)
        self._check_shape(workers, local)
        kwargs = {
            "params": [np.asarray(p) for p in params],
            "xs": [np.asarray(x) for x in per_replica_x],
            "ys": [np.asarray(y) for y in per_replica_y],
            "lr": lr,
            "global_batch_size": gbs,
        }
        results = self.run_on_cluster(workers, local, "train_step", kwargs)
        return [loss for loss, _ in results], [params for _, params in results]

    def multi_worker_variable_init(self, initials, devices_per_worker):
        self._check_shape(len(initials), devices_per_worker)
        kwargs = {"initials": [np.asarray(v) for v in initials]}
        return self.run_on_cluster(len(initials), devices_per_worker, "variable_init", kwargs)
