"""Deliberately broken adapters: each plants one classic bug, for testing the catalogue.

Every class here is the reference adapter with one rule broken the way real code breaks
it; ``CATCHES`` names the property meant to catch each one. The catalogue's own tests
require that property to fail, with a small shrunk counterexample.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import simdist_reference as ref
from simdist_reference import partitioners as ref_partitioners
from simdist_reference import sharding
from simdist_reference import tpu as ref_tpu

from simdist.testing.adapters.reference_adapter import (
    ReferenceAdapter,
    by_worker,
    softmax_model,
)


class LossPerReplicaBatch(ReferenceAdapter):
    """Scales each replica's loss by its own batch size (tf.reduce_mean), not the global one."""

    name = "broken.loss_per_replica_batch"

    def compute_average_loss(self, per_replica_losses, global_batch_size):
        return [
            np.asarray(np.sum(loss, dtype=np.float64) / max(len(loss), 1))
            for loss in per_replica_losses
        ]

    def train_step(self, params, per_replica_x, per_replica_y, lr, global_batch_size):
        losses, grads = ref.replica_losses_and_grads(
            params, per_replica_x, per_replica_y, softmax_model, "local_mean"
        )
        return _finish(params, losses, grads, lr, "SUM", len(per_replica_x))


class MeanAfterScaling(ReferenceAdapter):
    """Scales by the global batch, then MEAN-reduces loss and gradients (should be SUM)."""

    name = "broken.mean_after_scaling"

    def train_step(self, params, per_replica_x, per_replica_y, lr, global_batch_size):
        losses, grads = ref.replica_losses_and_grads(
            params, per_replica_x, per_replica_y, softmax_model, "global", global_batch_size
        )
        return _finish(params, losses, grads, lr, "MEAN", len(per_replica_x))


def _finish(params, losses, grads, lr, op, n):
    with np.errstate(invalid="ignore", divide="ignore"):
        reduced = [ref.reduce(op, [g[i] for g in grads]) for i in range(len(params))]
        new = ref.sgd_update(params, reduced, lr)
        return np.asarray(ref.reduce(op, losses)), [list(new) for _ in range(n)]


class PartialBatchSplitEvenly(ReferenceAdapter):
    """Splits a partial global batch with np.array_split ([2, 1, 1, 1] for 5 over 4)
    instead of TF's ceil slices ([2, 2, 1, 0])."""

    name = "broken.partial_batch_split"

    def distribute_dataset(
        self, elements, global_batch_size, num_replicas, drop_remainder, auto_shard_policy
    ):
        steps = super().distribute_dataset(
            elements, global_batch_size, num_replicas, drop_remainder, auto_shard_policy
        )
        if not isinstance(elements, np.ndarray) or not steps:
            return steps
        last = np.concatenate(steps[-1])
        if len(last) < global_batch_size:
            steps[-1] = list(np.array_split(last, num_replicas))
        return steps


class SyncOnReadNoAggregation(ReferenceAdapter):
    """Reads an ON_READ variable across replicas as replica 0's copy, whatever the aggregation."""

    name = "broken.sync_on_read_unaggregated"

    def sync_on_read(self, initial, local_values, aggregation):
        local, _ = super().sync_on_read(initial, local_values, aggregation)
        if aggregation == "NONE":
            return super().sync_on_read(initial, local_values, aggregation)
        return local, np.asarray(local_values[0])


class AllReduceDropsReplica(ReferenceAdapter):
    """All-reduces over every replica but the last (an off-by-one in a ring)."""

    name = "broken.all_reduce_drops_replica"

    def all_reduce(self, op: str, per_replica: Sequence[np.ndarray]) -> list[np.ndarray]:
        kept = list(per_replica[:-1]) or [np.zeros_like(per_replica[0])]
        result = ref.reduce(op, kept)
        return [result.copy() for _ in per_replica]


class MultiWorkerReducesLocally(ReferenceAdapter):
    """Each worker reduces only its own local replicas (the cross-worker step is missing)."""

    name = "broken.multi_worker_local_reduce"

    def multi_worker_reduce(self, op, per_replica, workers, axis):
        return [ref.reduce(op, local, axis=axis) for local in by_worker(per_replica, workers)]


class ShardsByLocalReplicas(ReferenceAdapter):
    """Each worker splits the dataset over its own L replicas as if it were alone: the
    worker count is left out of the sharding (every worker reads everything)."""

    name = "broken.auto_shard_local_replicas"

    def auto_shard(self, policy, spec, workers, devices_per_worker):
        alone = sharding.distribute_across_workers(
            spec.global_batch_size,
            1,
            devices_per_worker,
            elements=spec.elements,
            file_lines=spec.file_lines,
            policy=policy,
            drop_remainder=spec.drop_remainder,
        )
        return [[step[0] for _ in range(workers)] for step in alone]


class TPUCoresAsReplicas(ReferenceAdapter):
    """Counts every TensorCore of a v4 / v5p slice as a replica (megacore left out): the
    name's number is taken as the replica count for every generation."""

    name = "broken.tpu_cores_as_replicas"

    def tpu_num_replicas(self, accelerator):
        return int(accelerator.rsplit("-", 1)[1])


class TPUGatherRagged(ReferenceAdapter):
    """Gathers on a TPU as on GPUs: shapes may differ along the gathered axis."""

    name = "broken.tpu_gather_ragged"

    def tpu_gather(self, accelerator, per_replica, axis):
        ref_tpu.replicas_per_slice(accelerator)
        return ref.gather(list(per_replica), axis)

    def tpu_all_gather(self, accelerator, per_replica, axis):
        result = self.tpu_gather(accelerator, per_replica, axis)
        return [result.copy() for _ in per_replica]


class MinSizeRoundsDown(ReferenceAdapter):
    """MinSizePartitioner with floor(total / min_shard_bytes) shards: rounds the wrong way,
    so a variable just over a multiple of the minimum gets one shard too few."""

    name = "broken.partitioner_rounds_down"

    def partitioner_shards(self, kind, params, shape, dtype):
        if kind != "MinSize":
            return super().partitioner_shards(kind, params, shape, dtype)
        size = ref_partitioners.element_bytes(dtype, params.get("bytes_per_string", 16))
        total = int(np.prod(shape)) * size
        count = max(1, min(shape[0], params["max_shards"], total // params["min_shard_bytes"]))
        return [count] + [1] * (len(shape) - 1)


class ClosureReapplied(ReferenceAdapter):
    """A coordinator that keeps the update of a function whose worker died, and then runs
    the function again elsewhere: each planned death that happens applies it twice."""

    name = "broken.closure_reapplied"

    def ps_counter_closures(self, workers, closures, kills, seed):
        counter, results = super().ps_counter_closures(workers, closures, kills, seed)
        again = sum(1 for step, _ in kills.values() if step <= closures)
        return np.int64(counter + again), results


BROKEN: dict[str, type[ReferenceAdapter]] = {
    "loss_per_replica_batch": LossPerReplicaBatch,
    "mean_after_scaling": MeanAfterScaling,
    "partial_batch_split": PartialBatchSplitEvenly,
    "sync_on_read_unaggregated": SyncOnReadNoAggregation,
    "all_reduce_drops_replica": AllReduceDropsReplica,
    "multi_worker_local_reduce": MultiWorkerReducesLocally,
    "auto_shard_local_replicas": ShardsByLocalReplicas,
    "tpu_cores_as_replicas": TPUCoresAsReplicas,
    "tpu_gather_ragged": TPUGatherRagged,
    "partitioner_rounds_down": MinSizeRoundsDown,
    "closure_reapplied": ClosureReapplied,
}

#: broken adapter name -> the property that must catch it.
CATCHES: dict[str, str] = {
    "loss_per_replica_batch": "loss.compute_average_loss.global_batch",
    "mean_after_scaling": "training.n_vs_1.equivalence",
    "partial_batch_split": "input.partial_batch.fills_replicas_in_order",
    "sync_on_read_unaggregated": "variables.sync_on_read.read_aggregates",
    "all_reduce_drops_replica": "all_reduce.sum",
    "multi_worker_local_reduce": "multi_worker.reduce.sum.axis_none",
    "auto_shard_local_replicas": "multi_worker.auto_shard.data",
    "tpu_cores_as_replicas": "tpu.replicas_per_slice",
    "tpu_gather_ragged": "tpu.gather.identical_shapes",
    "partitioner_rounds_down": "ps.partitioners.shard_counts",
    "closure_reapplied": "ps.closures.exactly_once",
}
