"""The multi-worker operations as one worker runs them, for any module with TF's face.

Each program takes the module (``simdist`` or ``tensorflow``), this worker's
``MultiWorkerMirroredStrategy`` and plain arguments, and returns this worker's part of the
answer as plain NumPy data. The simdist adapter runs them on every worker of
``simdist.sim.launch``; the TensorFlow adapter runs them in W local processes
(:mod:`simdist.testing.adapters.tf_cluster`). The same code drives both, so a difference
between them is a difference of behaviour, never of test code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _numpy(value: Any) -> np.ndarray:
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def _distributed(tf: Any, strategy: Any, arrays: Sequence[Any]) -> Any:
    """A distributed value whose replica ``g`` (replica_id_in_sync_group) holds arrays[g]."""
    tensors = [np.asarray(a) for a in arrays]
    return strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(tensors[ctx.replica_id_in_sync_group])
    )


def _local(strategy: Any, value: Any) -> list[np.ndarray]:
    return [_numpy(v) for v in strategy.experimental_local_results(value)]


def _worker_index(strategy: Any) -> int:
    resolver = strategy.cluster_resolver
    return int(resolver.task_id) if resolver.task_id is not None else 0


def reduce(tf, strategy, op: str, values, axis) -> np.ndarray:
    """``strategy.reduce(op, value, axis)``."""
    return _numpy(strategy.reduce(op, _distributed(tf, strategy, values), axis=axis))


def all_reduce(tf, strategy, op: str, values) -> list[np.ndarray]:
    """The local replicas' ``ReplicaContext.all_reduce(op, value)``."""

    def fn(x):
        return tf.distribute.get_replica_context().all_reduce(op, x)

    return _local(strategy, strategy.run(fn, args=(_distributed(tf, strategy, values),)))


def gather(tf, strategy, values, axis: int) -> np.ndarray:
    """``strategy.gather(value, axis)``."""
    return _numpy(strategy.gather(_distributed(tf, strategy, values), axis=axis))


def local_results(tf, strategy, values) -> list[np.ndarray]:
    """``experimental_local_results`` of the value."""
    return _local(strategy, _distributed(tf, strategy, values))


def replica_ids(tf, strategy) -> tuple[int, list[int]]:
    """``num_replicas_in_sync`` and each local replica's ``replica_id_in_sync_group``."""

    def fn():
        return tf.constant(tf.distribute.get_replica_context().replica_id_in_sync_group)

    ids = [int(i) for i in _local(strategy, strategy.run(fn))]
    return int(strategy.num_replicas_in_sync), ids


def auto_shard(
    tf, strategy, policy: str, elements, paths, global_batch_size: int, drop_remainder: bool
) -> list[list[np.ndarray]]:
    """Every step's local per-replica batches of a distributed dataset under ``policy``.

    In-memory ``elements`` go through ``from_tensor_slices``; otherwise the text files
    ``paths`` through ``TextLineDataset`` (lines come back as int64).
    """
    if paths is None:
        dataset = tf.data.Dataset.from_tensor_slices(np.asarray(elements, np.int64))
    else:
        dataset = tf.data.TextLineDataset(list(paths))
    dataset = dataset.batch(global_batch_size, drop_remainder=drop_remainder)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = getattr(
        tf.data.experimental.AutoShardPolicy, policy
    )
    dataset = dataset.with_options(options)
    steps = []
    for step in strategy.experimental_distribute_dataset(dataset):
        steps.append([_as_ints(batch) for batch in _local(strategy, step)])
    return steps


def _as_ints(batch: np.ndarray) -> np.ndarray:
    """A batch as int64 (text lines are parsed; in-memory ints are kept)."""
    if batch.dtype.kind in "SUO":
        return np.asarray([int(x) for x in batch.reshape(-1).tolist()], np.int64)
    return batch.astype(np.int64)


def train_step(
    tf, strategy, params, xs, ys, lr: float, global_batch_size: int
) -> tuple[np.ndarray, list[list[np.ndarray]]]:
    """One SGD step of softmax regression (the single-host adapter's model and loss)."""
    with strategy.scope():
        w = tf.Variable(np.asarray(params[0], np.float64))
        b = tf.Variable(np.asarray(params[1], np.float64))
        optimizer = tf.keras.optimizers.SGD(learning_rate=lr)

    def step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, w) + b
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch_size)
        grads = tape.gradient(loss, [w, b])
        optimizer.apply_gradients(zip(grads, [w, b], strict=True))
        return loss

    x = _distributed(tf, strategy, [np.asarray(v, np.float64) for v in xs])
    y = _distributed(tf, strategy, [np.asarray(v, np.int64) for v in ys])
    loss = strategy.reduce("SUM", strategy.run(step, args=(x, y)), axis=None)
    local_w, local_b = _local(strategy, w), _local(strategy, b)
    return _numpy(loss), [[w_r, b_r] for w_r, b_r in zip(local_w, local_b, strict=True)]


def variable_init(tf, strategy, initials) -> list[np.ndarray]:
    """A variable created in scope from this worker's own initial value; its components."""
    mine = np.asarray(initials[_worker_index(strategy)])
    with strategy.scope():
        variable = tf.Variable(mine)
    return _local(strategy, variable)


PROGRAMS = {
    "reduce": reduce,
    "all_reduce": all_reduce,
    "gather": gather,
    "local_results": local_results,
    "replica_ids": replica_ids,
    "auto_shard": auto_shard,
    "train_step": train_step,
    "variable_init": variable_init,
}


def run(tf: Any, strategy: Any, program: str, kwargs: dict) -> Any:
    """Runs ``PROGRAMS[program](tf, strategy, **kwargs)`` on this worker.

    Raises:
      ValueError: an unknown program name.
    """
    if program not in PROGRAMS:
        raise ValueError(f"unknown worker program {program!r}; known: {', '.join(PROGRAMS)}")
    return PROGRAMS[program](tf, strategy, **kwargs)


def run_with_new_strategy(tf: Any, program: str, kwargs: dict) -> Any:
    """Creates this worker's ``MultiWorkerMirroredStrategy`` (from its TF_CONFIG), then
    runs ``program`` (what each worker of ``simdist.sim.launch`` does)."""
    return run(tf, tf.distribute.MultiWorkerMirroredStrategy(), program, kwargs)
