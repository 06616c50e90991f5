"""simdist_reference: the oracle. Plain, slow, obviously correct statements of each rule.

Imports NumPy only, never simdist, so that simdist (and any other implementation of the
strategy API) can be property-tested against it.
"""

from simdist_reference.batch_norm import sync_batch_norm, sync_batch_statistics
from simdist_reference.batching import (
    batch,
    distribute_batch_sizes,
    distribute_batches,
    distribute_dataset,
    get_per_replica_batch_size,
    legacy_rebatch,
    per_replica_batch_sizes,
    rebatch,
)
from simdist_reference.collectives import (
    all_gather,
    all_reduce,
    broadcast,
    gather,
    gather_tpu,
    split_along,
)
from simdist_reference.losses import compute_average_loss, mean_metric, scale_regularization_loss
from simdist_reference.reduce import (
    REDUCE_OPS,
    reduce,
    reduce_non_distributed,
    reduce_op_name,
    sum_in_replica_order,
)
from simdist_reference.training import (
    StepResult,
    linear_regression,
    replica_losses_and_grads,
    sgd_update,
    softmax_regression,
    train_step_replicated,
    train_step_replicated_local_mean_mean,
    train_step_replicated_local_mean_sum,
    train_step_single,
)
from simdist_reference.variables import (
    AGGREGATIONS,
    UPDATE_KINDS,
    aggregation_name,
    mirrored_update_cross_replica,
    mirrored_update_replica_context,
    reduce_op_from_aggregation,
    sync_on_read_assign_cross_replica,
    sync_on_read_local,
    sync_on_read_update_local,
    sync_on_read_value,
)

__all__ = [
    "AGGREGATIONS",
    "REDUCE_OPS",
    "sync_batch_norm",
    "sync_batch_statistics",
    "UPDATE_KINDS",
    "StepResult",
    "aggregation_name",
    "all_gather",
    "all_reduce",
    "batch",
    "broadcast",
    "compute_average_loss",
    "distribute_batch_sizes",
    "distribute_batches",
    "distribute_dataset",
    "gather",
    "gather_tpu",
    "get_per_replica_batch_size",
    "legacy_rebatch",
    "linear_regression",
    "mean_metric",
    "mirrored_update_cross_replica",
    "mirrored_update_replica_context",
    "per_replica_batch_sizes",
    "rebatch",
    "reduce",
    "reduce_non_distributed",
    "reduce_op_from_aggregation",
    "reduce_op_name",
    "replica_losses_and_grads",
    "scale_regularization_loss",
    "sgd_update",
    "softmax_regression",
    "split_along",
    "sum_in_replica_order",
    "sync_on_read_assign_cross_replica",
    "sync_on_read_local",
    "sync_on_read_update_local",
    "sync_on_read_value",
    "train_step_replicated",
    "train_step_replicated_local_mean_mean",
    "train_step_replicated_local_mean_sum",
    "train_step_single",
]
