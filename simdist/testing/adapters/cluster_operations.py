"""The catalogue's optional cluster operations: multi-worker, TPU and parameter servers.

:class:`~simdist.testing.adapters.base.Adapter` inherits these; an implementation overrides
the ones it supports (the conventions are in :mod:`simdist.testing.adapters.base`'s
docstring). Each stub raises ``NotImplementedError``; ``Adapter.supports`` tells an override
from a stub.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["ClusterOperations"]


class ClusterOperations:
    """Multi-worker, TPU and parameter-server operations (all optional)."""

    # --- multi-worker (optional; see the module docstring for the cluster conventions) ------
    def multi_worker_reduce(
        self, op: str, per_replica: Sequence[np.ndarray], workers: int, axis: Any
    ) -> list[np.ndarray]:
        """Each worker's ``Strategy.reduce(op, value, axis)`` of a value on all W*L replicas.

        The value is made with ``experimental_distribute_values_from_function``: replica
        ``replica_id_in_sync_group = g`` holds ``per_replica[g]``.

        Returns:
          One result per worker, worker order.
        """
        raise NotImplementedError

    def multi_worker_all_reduce(
        self, op: str, per_replica: Sequence[np.ndarray], workers: int
    ) -> list[list[np.ndarray]]:
        """``ReplicaContext.all_reduce(op, value)`` in ``Strategy.run`` on every replica.

        Returns:
          Per worker, its local replicas' results (``experimental_local_results``).
        """
        raise NotImplementedError

    def multi_worker_gather(
        self, per_replica: Sequence[np.ndarray], workers: int, axis: int
    ) -> list[np.ndarray]:
        """Each worker's ``Strategy.gather(value, axis)`` (value made as in the reduce)."""
        raise NotImplementedError

    def multi_worker_local_results(
        self, per_replica: Sequence[np.ndarray], workers: int
    ) -> list[list[np.ndarray]]:
        """Each worker's ``experimental_local_results`` of the value made as in the reduce."""
        raise NotImplementedError

    def multi_worker_replica_ids(
        self, workers: int, devices_per_worker: int
    ) -> list[tuple[int, list[int]]]:
        """Per worker: ``(num_replicas_in_sync, [replica_id_in_sync_group of each local
        replica inside Strategy.run, in experimental_local_results order])``."""
        raise NotImplementedError

    def auto_shard(
        self, policy: str, spec: Any, workers: int, devices_per_worker: int
    ) -> list[list[list[np.ndarray]]]:
        """Every step of ``experimental_distribute_dataset`` on a W x L cluster.

        Args:
          policy: ``"AUTO"``, ``"FILE"``, ``"DATA"`` or ``"OFF"`` (``tf.data.Options``).
          spec: a ``simdist.testing.strategies.ShardSpec``: in-memory int64 ``elements``
            (``from_tensor_slices``) or ``file_lines``, one int64 array per text file whose
            lines the adapter writes and reads back with ``TextLineDataset`` (as ints);
            then ``.batch(global_batch_size, drop_remainder)``.
          workers, devices_per_worker: the cluster.

        Returns:
          steps[step][worker][local replica]: int64 arrays of elements (empty where a
          replica got no data at a step that some other replica had data for).
        """
        raise NotImplementedError

    def multi_worker_train_step(
        self,
        params: Sequence[np.ndarray],
        per_replica_x: Sequence[np.ndarray],
        per_replica_y: Sequence[np.ndarray],
        lr: float,
        global_batch_size: int,
        workers: int,
    ) -> tuple[list[np.ndarray], list[list[list[np.ndarray]]]]:
        """``train_step``'s softmax regression step on a cluster; replica g gets batch g.

        Returns:
          (each worker's loss SUM-reduced across all replicas, per worker the parameters
          ``[w, b]`` of each local replica after the step).
        """
        raise NotImplementedError

    def multi_worker_variable_init(
        self, initials: Sequence[np.ndarray], devices_per_worker: int
    ) -> list[list[np.ndarray]]:
        """Worker w creates ``tf.Variable(initials[w])`` in the strategy's scope.

        Returns:
          Per worker, the variable's local components right after creation.
        """
        raise NotImplementedError

    # --- TPU (optional; see the module docstring) -------------------------------------------
    def tpu_num_replicas(self, accelerator: str) -> int:
        """``TPUStrategy(TPUClusterResolver(tpu=accelerator)).num_replicas_in_sync`` (after
        connecting to the cluster and initializing the TPU system)."""
        raise NotImplementedError

    def tpu_gather(
        self, accelerator: str, per_replica: Sequence[np.ndarray], axis: int
    ) -> np.ndarray:
        """``TPUStrategy.gather(value, axis)``; ``len(per_replica)`` is the slice's replicas."""
        raise NotImplementedError

    def tpu_all_gather(
        self, accelerator: str, per_replica: Sequence[np.ndarray], axis: int
    ) -> list[np.ndarray]:
        """Every replica's ``ReplicaContext.all_gather(its value, axis)`` in
        ``TPUStrategy.run`` called inside a ``tf.function``."""
        raise NotImplementedError

    def tpu_run(self, accelerator: str, in_function: bool) -> list[int]:
        """``TPUStrategy.run`` of a plain Python function returning
        ``replica_id_in_sync_group``, called eagerly (``in_function=False``) or from a
        ``tf.function``.

        Returns:
          Each replica's result, replica order (``experimental_local_results``).
        """
        raise NotImplementedError

    def tpu_steps(
        self,
        accelerator: str,
        elements: np.ndarray,
        global_batch_size: int,
        drop_remainder: bool,
        dynamic_batch_size: bool,
        host_order_seed: int | None,
    ) -> list[tuple[list[np.ndarray], np.ndarray]]:
        """Every step of ``experimental_distribute_dataset`` of ``from_tensor_slices(elements)
        .batch(global_batch_size, drop_remainder)`` on the slice.

        Each step runs, in a ``tf.function``, ``strategy.run(fn, args=(batch,), options=
        RunOptions(experimental_enable_dynamic_batch_size=dynamic_batch_size))`` where ``fn``
        returns ``(x, compute_average_loss(float64(x)**2, global_batch_size))``; the loss is
        SUM-reduced. ``host_order_seed``: simdist's ``simdist_host_order_seed`` (an
        implementation without one may ignore it: any host order satisfies the rule).

        Returns:
          Per step: (each replica's batch, replica order; the SUM-reduced loss).
        """
        raise NotImplementedError

    # --- parameter servers (optional; see the module docstring) ----------------------------
    def partitioner_shards(
        self, kind: str, params: dict, shape: Sequence[int], dtype: str
    ) -> list[int]:
        """``tf.distribute.experimental.partitioners.<kind>Partitioner(**params)(TensorShape(
        shape), dtype)``; ``kind`` is ``"FixedShards"``, ``"MinSize"`` or ``"MaxSize"``,
        ``dtype`` a dtype name (``"float32"``, ``"string"``...)."""
        raise NotImplementedError

    def sharded_variable(
        self,
        initial: np.ndarray,
        num_shards: int,
        delta: np.ndarray,
        grad: np.ndarray,
        lr: float,
    ) -> dict[str, Any]:
        """A variable made in ``ParameterServerStrategy(variable_partitioner=
        FixedShardsPartitioner(num_shards))``'s scope from ``initial`` (rank >= 1, float64).

        Then ``assign_add(delta)``, then one SGD(lr) step on the loss ``sum(v * grad)``
        (its gradient is ``grad``) scheduled by a ClusterCoordinator.

        Returns:
          ``{"shards": each shard's value at creation, "read": the value read at creation,
          "after_assign_add": ..., "after_sgd": ...}``.
        """
        raise NotImplementedError

    def ps_counter_closures(
        self, workers: int, closures: int, kills: dict[int, tuple[int, float | None]], seed: int
    ) -> tuple[np.ndarray, list[int]]:
        """``closures`` functions scheduled on a cluster of ``workers`` workers and 1 ps, with
        the fault plan ``kills``; function ``i`` adds 1 to a ps int64 counter and returns
        ``i``; then ``join``.

        Returns:
          (the counter after ``join``, each function's fetched result in schedule order).
        """
        raise NotImplementedError

    def ps_async_run(self, workers: int, closures: int, seed: int) -> np.ndarray:
        """A ClusterCoordinator (``simdist_seed=seed`` or the implementation's equivalent)
        runs ``closures`` functions on ``workers`` workers: function ``i`` reads a ps float64
        variable ``x`` (initially 1), adds ``0.5 * x + i`` to it and returns what it read.

        Returns:
          float64 ``[x after join, result of function 0, function 1, ...]``.
        """
        raise NotImplementedError

    def ps_failure_run(
        self, workers: int, num_ps: int, closures: int, failing_ps: int, after_closures: int
    ) -> None:
        """``num_ps`` ps tasks each hold one variable; ``closures`` functions each add 1 to
        every variable; ps task ``failing_ps`` fails once ``after_closures`` functions have
        finished. ``join()``, then fetch every result; errors propagate.
        """
        raise NotImplementedError
