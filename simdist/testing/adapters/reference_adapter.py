"""The reference adapter: the catalogue's operations answered by ``simdist_reference`` itself.

Running the catalogue against it checks the catalogue (each property holds on the oracle),
and it is the base of the deliberately broken adapters in ``broken.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import simdist_reference as ref
from simdist_reference import partitioners as ref_partitioners
from simdist_reference import sharding
from simdist_reference import tpu as ref_tpu

from simdist.testing.adapters.base import Adapter, Nest


def map_nest(fn, nest: Nest) -> Nest:
    """Applies ``fn`` to every array of a nest (an array, tuple or dict of arrays)."""
    if isinstance(nest, tuple):
        return tuple(map_nest(fn, item) for item in nest)
    if isinstance(nest, dict):
        return {key: map_nest(fn, nest[key]) for key in sorted(nest)}
    return fn(nest)


def leaves(nest: Nest) -> list[Any]:
    """The arrays of a nest in a fixed order (tuples in order, dicts by sorted key)."""
    if isinstance(nest, tuple):
        return [leaf for item in nest for leaf in leaves(item)]
    if isinstance(nest, dict):
        return [leaf for key in sorted(nest) for leaf in leaves(nest[key])]
    return [nest]


def rebuild(nest: Nest, flat: list[Any]) -> Nest:
    """The nest with the structure of ``nest`` whose leaves are ``flat``, in order."""
    it = iter(flat)
    return map_nest(lambda _: next(it), nest)


def softmax_model(params, x, y):
    """The catalogue's model: the reference's softmax regression."""
    return ref.softmax_regression(params, x, y)


def by_worker(items: Sequence[Any], workers: int) -> list[list[Any]]:
    """Global-replica-order items cut into each worker's local ones (worker-major)."""
    local = len(items) // workers
    return [list(items[w * local : (w + 1) * local]) for w in range(workers)]


class ReferenceAdapter(Adapter):
    """Every operation computed by the oracle (simdist's strict NONE rule included).

    Of the TPU and parameter-server operations it answers what the reference states (slice
    table, gather_tpu, TPU input steps, partitioner counts, sharded == unsharded, exactly
    once, one interleaving); ``tpu_run`` and ``ps_failure_run`` are behaviours of a runtime,
    not of the rules' data, and are left out (their properties SKIP).
    """

    name = "reference"

    def reduce(self, op: str, per_replica: Sequence[np.ndarray], axis: Any) -> np.ndarray:
        return ref.reduce(op, list(per_replica), axis=axis)

    def all_reduce(self, op: str, per_replica: Sequence[np.ndarray]) -> list[np.ndarray]:
        return ref.all_reduce(op, list(per_replica))

    def gather(self, per_replica: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return ref.gather(list(per_replica), axis)

    def all_gather(self, per_replica: Sequence[np.ndarray], axis: int) -> list[np.ndarray]:
        return ref.all_gather(list(per_replica), axis)

    def distribute_dataset(
        self,
        elements: Nest,
        global_batch_size: int,
        num_replicas: int,
        drop_remainder: bool,
        auto_shard_policy: str,
    ) -> list[list[Nest]]:
        per_leaf = [
            ref.distribute_dataset(
                leaf, global_batch_size, num_replicas, drop_remainder, auto_shard_policy
            )
            for leaf in leaves(elements)
        ]
        steps = []
        for s in range(len(per_leaf[0])):
            steps.append(
                [rebuild(elements, [leaf[s][r] for leaf in per_leaf]) for r in range(num_replicas)]
            )
        return steps

    def per_replica_batch_size(self, global_batch_size: int, num_replicas: int) -> int:
        return ref.get_per_replica_batch_size(global_batch_size, num_replicas)

    def compute_average_loss(
        self, per_replica_losses: Sequence[np.ndarray], global_batch_size: int | None
    ) -> list[np.ndarray]:
        n = len(per_replica_losses)
        return [
            np.asarray(ref.compute_average_loss(loss, None, global_batch_size, n))
            for loss in per_replica_losses
        ]

    def train_step(
        self,
        params: Sequence[np.ndarray],
        per_replica_x: Sequence[np.ndarray],
        per_replica_y: Sequence[np.ndarray],
        lr: float,
        global_batch_size: int,
    ) -> tuple[np.ndarray, list[list[np.ndarray]]]:
        result = ref.train_step_replicated(
            params, per_replica_x, per_replica_y, softmax_model, lr, global_batch_size
        )
        return np.asarray(result.loss), [list(result.params) for _ in per_replica_x]

    def mirrored_update(
        self,
        initial: np.ndarray,
        per_replica_values: Sequence[np.ndarray],
        aggregation: str,
        kind: str,
    ) -> list[np.ndarray]:
        copies = ref.broadcast(initial, len(per_replica_values))
        return ref.mirrored_update_replica_context(copies, per_replica_values, aggregation, kind)

    def mirrored_update_cross_replica(
        self, initial: np.ndarray, value: np.ndarray, num_replicas: int, kind: str
    ) -> list[np.ndarray]:
        return ref.mirrored_update_cross_replica(ref.broadcast(initial, num_replicas), value, kind)

    def _local_assigns(self, initial, local_values) -> list[np.ndarray]:
        copies = ref.broadcast(initial, len(local_values))
        for r, value in enumerate(local_values):
            copies = ref.sync_on_read_update_local(copies, r, value, "assign")
        return copies

    def sync_on_read(
        self, initial: np.ndarray, local_values: Sequence[np.ndarray], aggregation: str
    ) -> tuple[list[np.ndarray], np.ndarray]:
        copies = self._local_assigns(initial, local_values)
        local = [ref.sync_on_read_local(copies, r) for r in range(len(copies))]
        return local, ref.sync_on_read_value(copies, aggregation)

    def sync_on_read_assign(
        self,
        initial: np.ndarray,
        local_values: Sequence[np.ndarray],
        value: np.ndarray,
        aggregation: str,
        kind: str,
    ) -> list[np.ndarray]:
        copies = self._local_assigns(initial, local_values)
        return ref.sync_on_read_assign_cross_replica(copies, value, aggregation, kind)

    def checkpoint_round_trip(
        self,
        copies: Sequence[np.ndarray],
        synchronization: str,
        aggregation: str,
        restore_replicas: int,
        directory: str,
    ) -> list[np.ndarray]:
        zeros = ref.broadcast(np.zeros_like(np.asarray(copies[0])), restore_replicas)
        if synchronization == "ON_READ":
            saved = ref.sync_on_read_value(list(copies), aggregation)
            return ref.sync_on_read_assign_cross_replica(zeros, saved, aggregation)
        return ref.mirrored_update_cross_replica(zeros, copies[0])

    # --- multi-worker ---------------------------------------------------------------------
    def multi_worker_reduce(self, op, per_replica, workers, axis):
        result = ref.reduce(op, list(per_replica), axis=axis)
        return [result.copy() for _ in range(workers)]

    def multi_worker_all_reduce(self, op, per_replica, workers):
        return by_worker(ref.all_reduce(op, list(per_replica)), workers)

    def multi_worker_gather(self, per_replica, workers, axis):
        result = ref.gather(list(per_replica), axis)
        return [result.copy() for _ in range(workers)]

    def multi_worker_local_results(self, per_replica, workers):
        return by_worker([np.asarray(v) for v in per_replica], workers)

    def multi_worker_replica_ids(self, workers, devices_per_worker):
        n = workers * devices_per_worker
        return [(n, ids) for ids in by_worker(list(range(n)), workers)]

    def auto_shard(self, policy, spec, workers, devices_per_worker):
        return sharding.distribute_across_workers(
            spec.global_batch_size,
            workers,
            devices_per_worker,
            elements=spec.elements,
            file_lines=spec.file_lines,
            policy=policy,
            drop_remainder=spec.drop_remainder,
        )

    def multi_worker_train_step(self, params, per_replica_x, per_replica_y, lr, gbs, workers):
        loss, per_replica = self.train_step(params, per_replica_x, per_replica_y, lr, gbs)
        return [loss.copy() for _ in range(workers)], by_worker(per_replica, workers)

    def multi_worker_variable_init(self, initials, devices_per_worker):
        first = np.asarray(initials[0])
        return [[first.copy() for _ in range(devices_per_worker)] for _ in initials]

    # --- TPU ------------------------------------------------------------------------------
    def tpu_num_replicas(self, accelerator):
        return ref_tpu.replicas_per_slice(accelerator)

    def _tpu_replicas(self, accelerator, per_replica):
        n = ref_tpu.replicas_per_slice(accelerator)
        if len(per_replica) != n:
            raise ValueError(f"{len(per_replica)} values for the {n} replicas of {accelerator}")
        return list(per_replica)

    def tpu_gather(self, accelerator, per_replica, axis):
        return ref.gather_tpu(self._tpu_replicas(accelerator, per_replica), axis)

    def tpu_all_gather(self, accelerator, per_replica, axis):
        result = ref.gather_tpu(self._tpu_replicas(accelerator, per_replica), axis)
        return [result.copy() for _ in per_replica]

    def tpu_steps(
        self,
        accelerator,
        elements,
        global_batch_size,
        drop_remainder,
        dynamic_batch_size,
        host_order_seed,
    ):
        steps = ref_tpu.tpu_steps(elements, global_batch_size, accelerator, drop_remainder)
        out = []
        for step in steps:  # host order: the identity (any order satisfies the rule)
            if not dynamic_batch_size and not ref_tpu.static_shapes(step):
                raise ValueError(
                    f"per-replica batches of shapes {[b.shape for b in step]} in one step "
                    "without the dynamic batch size"
                )
            out.append((step, ref_tpu.step_loss(step, global_batch_size)))
        return out

    # --- parameter servers ----------------------------------------------------------------
    def partitioner_shards(self, kind, params, shape, dtype):
        return ref_partitioners.shard_counts(kind, params, shape, dtype)

    def sharded_variable(self, initial, num_shards, delta, grad, lr):
        value = np.asarray(initial, np.float64)
        added = value + np.asarray(delta, np.float64)
        return {
            "shards": ref_partitioners.split_rows(value, num_shards),
            "read": value.copy(),
            "after_assign_add": added,
            "after_sgd": added - lr * np.asarray(grad, np.float64),
        }

    def ps_counter_closures(self, workers, closures, kills, seed):
        return np.int64(closures), list(range(closures))

    def ps_async_run(self, workers, closures, seed):
        x, reads = 1.0, []  # one interleaving: schedule order
        for i in range(closures):
            reads.append(x)
            x = x + (0.5 * x + i)
        return np.asarray([x, *reads], np.float64)
