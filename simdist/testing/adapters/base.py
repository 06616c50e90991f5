"""The Adapter interface: the catalogue's operations, mapped onto one implementation.

The conformance catalogue (``simdist.testing.properties``) never touches an implementation
directly. It calls the operations below on an :class:`Adapter`, with plain NumPy data in and
plain NumPy data out, and compares the results with ``simdist_reference``. To test another
implementation of the ``tf.distribute`` semantics, subclass :class:`Adapter` and override the
operations it supports; every operation left alone makes the properties that need it SKIP.

Conventions shared by every operation:

* a *per-replica value* is a list of arrays, one per replica, in replica order; its length
  is the number of replicas the operation runs on (1 to ``max_replicas``);
* ``op`` is ``"SUM"`` or ``"MEAN"`` (or, for error properties, any string the caller chose);
  ``aggregation`` is ``"NONE"``, ``"SUM"``, ``"MEAN"`` or ``"ONLY_FIRST_REPLICA"``;
  ``kind`` is ``"assign"``, ``"assign_add"`` or ``"assign_sub"``;
* results are NumPy arrays (any dtype: properties compare by value with a tolerance fitted to
  the inputs' dtype), and per-replica results are lists of arrays in replica order;
* an input that would crash the implementation's process raises :class:`Unsupported`
  (the example is discarded and reported), never a made-up result;
* an input the implementation rejects raises the implementation's own exception; error
  properties check its class against the one the rule names (see ``errors.*``).

Multi-worker operations (``multi_worker_*``, ``auto_shard``) run on a cluster of ``workers``
workers with ``L`` replicas each (``L = len(per_replica) // workers`` where a per-replica
value is given). Replicas are numbered worker-major: worker ``w`` runs the global replicas
``w*L .. w*L + L - 1``, so a per-replica value lists all ``W*L`` replicas in that order.
Results come back per worker, in worker order. The cluster shapes a property may ask for
are bounded by ``min_workers``, ``max_workers`` and ``max_devices_per_worker``.

TPU operations (``tpu_*``) run ``TPUStrategy`` on a slice named by its accelerator type
(``"v4-8"``, ``"v5litepod-1"``...): a per-replica value lists one array per TPU replica, host
by host. Parameter-server operations (``partitioner_shards``, ``sharded_variable``, ``ps_*``)
run ``ParameterServerStrategy`` with a ``ClusterCoordinator``; a fault plan is plain data,
``{worker: (step, restart_after or None)}`` (worker ``w`` dies at its ``step``-th closure,
counting from 1, and rejoins ``restart_after`` simulated seconds later, or never). All of
them are optional: an implementation without TPUs or parameter servers leaves them alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist.testing.adapters.cluster_operations import ClusterOperations


class Unsupported(Exception):
    """Raised by an adapter for an input its implementation cannot take without crashing.

    The runner discards that example (``hypothesis.reject``) and lists the reason in the
    report, so the property keeps its rule for every other input. Use it only for inputs
    that would take the process down (a segfault, a hang) and name a known difference.
    """


Nest = Any  # an array, or a tuple / dict of arrays (a dataset element's structure)

#: Operation name -> one-line contract. The names are the Adapter's method names.
OPERATIONS: dict[str, str] = {
    "reduce": "Strategy.reduce(op, per-replica value, axis) in cross-replica context",
    "all_reduce": "ReplicaContext.all_reduce(op, value) inside Strategy.run",
    "gather": "Strategy.gather(per-replica value, axis) in cross-replica context",
    "all_gather": "ReplicaContext.all_gather(value, axis) inside Strategy.run",
    "distribute_dataset": "Strategy.experimental_distribute_dataset of a batched dataset",
    "per_replica_batch_size": "InputContext.get_per_replica_batch_size",
    "compute_average_loss": "tf.nn.compute_average_loss inside Strategy.run",
    "mirrored_update": "assign/assign_add/assign_sub of a mirrored variable in Strategy.run",
    "mirrored_update_cross_replica": "the same, in cross-replica context",
    "sync_on_read": "an ON_READ variable: local assigns in Strategy.run, then reads",
    "sync_on_read_assign": "an ON_READ variable assigned in cross-replica context",
    "train_step": "one SGD step of softmax regression under a strategy",
    "checkpoint_round_trip": "tf.train.Checkpoint save of a distributed variable, then restore",
    # multi-worker (MultiWorkerMirroredStrategy on a W x L cluster; global replica order)
    "multi_worker_reduce": "Strategy.reduce(op, value, axis) on every worker of a cluster",
    "multi_worker_all_reduce": "ReplicaContext.all_reduce(op, value) on every replica of a cluster",
    "multi_worker_gather": "Strategy.gather(value, axis) on every worker of a cluster",
    "multi_worker_local_results": "experimental_local_results of a value on each worker",
    "multi_worker_replica_ids": "num_replicas_in_sync and replica_id_in_sync_group per worker",
    "auto_shard": "experimental_distribute_dataset on a cluster under an AutoShardPolicy",
    "multi_worker_train_step": "one SGD step of softmax regression on a cluster",
    "multi_worker_variable_init": "a variable created in scope with a different value per worker",
    # TPU (TPUStrategy on a slice of an accelerator type)
    "tpu_num_replicas": "TPUStrategy.num_replicas_in_sync on a slice of an accelerator type",
    "tpu_gather": "TPUStrategy.gather(value, axis) in cross-replica context",
    "tpu_all_gather": "ReplicaContext.all_gather(value, axis) in TPUStrategy.run (tf.function)",
    "tpu_run": "TPUStrategy.run of a plain Python function, eagerly or inside a tf.function",
    "tpu_steps": "a dataset distributed by TPUStrategy: each step's batches and summed loss",
    # parameter servers (ParameterServerStrategy, ClusterCoordinator)
    "partitioner_shards": "a tf.distribute.experimental.partitioners object on (shape, dtype)",
    "sharded_variable": "a ShardedVariable read, assign_add and one SGD step",
    "ps_counter_closures": "closures adding 1 to a ps variable, under a fault plan",
    "ps_async_run": "a seeded coordinator run of closures reading and updating a ps variable",
    "ps_failure_run": "closures scheduled and joined while a ps task fails",
}

#: The operations that run on a multi-worker cluster (sized by the cluster attributes).
MULTI_WORKER_OPERATIONS = tuple(op for op in OPERATIONS if op.startswith("multi_worker_")) + (
    "auto_shard",
)


class Adapter(ClusterOperations):
    """Maps the catalogue's operations onto one implementation (override what it supports).

    Attributes:
      name: the implementation's name, shown in reports (``"simdist"``, ``"tensorflow"``).
      max_replicas: the most replicas an operation may be asked to use.

    Subclasses override any of the operation methods below. ``supports(op)`` is true for the
    overridden ones; the runner skips a property whose operations are not all supported.
    ``strategy_names`` / ``make_strategy`` feed the pytest plugin's ``strategy`` fixture.
    """

    name = "unnamed"
    #: Cluster shapes the multi-worker operations accept (workers, replicas per worker).
    min_workers = 1
    max_workers = 3
    max_devices_per_worker = 2

    def __init__(self, max_replicas: int = 4) -> None:
        if isinstance(max_replicas, bool) or not isinstance(max_replicas, int):
            raise TypeError(f"max_replicas must be an int, got {max_replicas!r}")
        if max_replicas < 1:
            raise ValueError(f"max_replicas must be at least 1, got {max_replicas}")
        self.max_replicas = max_replicas

    def supports(self, op: str) -> bool:
        """Whether this adapter overrides operation ``op`` (a key of ``OPERATIONS``)."""
        if op not in OPERATIONS:
            raise ValueError(f"unknown operation {op!r}; known: {', '.join(OPERATIONS)}")
        return getattr(type(self), op) is not getattr(Adapter, op)

    def set_workers(self, workers: int) -> None:
        """Makes multi-worker properties use clusters of up to ``workers`` workers.

        The runner calls it for ``--workers N``. An adapter whose clusters are costly to
        start (one process per worker) may fix the count at ``workers`` instead.

        Raises:
          ValueError: ``workers`` is not a positive int.
        """
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be an int >= 1, got {workers!r}")
        self.max_workers = workers
        self.min_workers = min(self.min_workers, workers)

    def strategy_names(self) -> list[str]:
        """Names of the implementation's strategies, for the pytest ``strategy`` fixture."""
        return []

    def make_strategy(self, name: str, num_replicas: int) -> Any:
        """Builds the implementation's strategy object ``name`` over ``num_replicas``."""
        raise NotImplementedError(f"{self.name} builds no strategy objects")

    def close(self) -> None:
        """Releases whatever the adapter holds (called by the runner when done)."""

    # --- collectives ----------------------------------------------------------------------
    def reduce(self, op: str, per_replica: Sequence[np.ndarray], axis: Any) -> np.ndarray:
        """``Strategy.reduce(op, value, axis)``; ``axis`` is None, an int or a tuple."""
        raise NotImplementedError

    def all_reduce(self, op: str, per_replica: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Every replica's result of ``ReplicaContext.all_reduce(op, its value)``."""
        raise NotImplementedError

    def gather(self, per_replica: Sequence[np.ndarray], axis: int) -> np.ndarray:
        """``Strategy.gather(value, axis)``."""
        raise NotImplementedError

    def all_gather(self, per_replica: Sequence[np.ndarray], axis: int) -> list[np.ndarray]:
        """Every replica's result of ``ReplicaContext.all_gather(its value, axis)``."""
        raise NotImplementedError

    # --- input ----------------------------------------------------------------------------
    def distribute_dataset(
        self,
        elements: Nest,
        global_batch_size: int,
        num_replicas: int,
        drop_remainder: bool,
        auto_shard_policy: str,
    ) -> list[list[Nest]]:
        """Steps of ``experimental_distribute_dataset(from_tensor_slices(elements).batch(...))``.

        Args:
          elements: an array, or a tuple / dict of arrays with equal first dimensions.
          global_batch_size: the ``.batch`` size.
          num_replicas: replicas of the strategy.
          drop_remainder: the ``.batch`` flag.
          auto_shard_policy: ``"AUTO"`` or ``"OFF"`` (set through ``tf.data.Options``).

        Returns:
          One list per step of ``num_replicas`` per-replica batches, each with the
          structure of ``elements``.
        """
        raise NotImplementedError

    def per_replica_batch_size(self, global_batch_size: int, num_replicas: int) -> int:
        """``InputContext(num_replicas_in_sync=...).get_per_replica_batch_size(...)``."""
        raise NotImplementedError

    # --- losses and training --------------------------------------------------------------
    def compute_average_loss(
        self, per_replica_losses: Sequence[np.ndarray], global_batch_size: int | None
    ) -> list[np.ndarray]:
        """Each replica's ``compute_average_loss(its losses, global_batch_size=...)``."""
        raise NotImplementedError

    def train_step(
        self,
        params: Sequence[np.ndarray],
        per_replica_x: Sequence[np.ndarray],
        per_replica_y: Sequence[np.ndarray],
        lr: float,
        global_batch_size: int,
    ) -> tuple[np.ndarray, list[list[np.ndarray]]]:
        """One step of softmax regression (float64), the custom-training tutorial's way.

        The model: logits = x @ w + b, ``params = [w, b]``; per-example loss is sparse
        softmax cross-entropy; each replica scales it with ``compute_average_loss(...,
        global_batch_size)``; the gradients are applied with SGD(lr) by the strategy.

        Returns:
          (the loss SUM-reduced across replicas, each replica's parameters after the step).
        """
        raise NotImplementedError

    # --- variables ------------------------------------------------------------------------
    def mirrored_update(
        self,
        initial: np.ndarray,
        per_replica_values: Sequence[np.ndarray],
        aggregation: str,
        kind: str,
    ) -> list[np.ndarray]:
        """A mirrored variable (``initial``, ``aggregation``) updated inside ``Strategy.run``.

        Returns:
          Every copy (component) of the variable afterwards, replica order.
        """
        raise NotImplementedError

    def mirrored_update_cross_replica(
        self, initial: np.ndarray, value: np.ndarray, num_replicas: int, kind: str
    ) -> list[np.ndarray]:
        """A mirrored variable updated once in cross-replica context; every copy after."""
        raise NotImplementedError

    def sync_on_read(
        self, initial: np.ndarray, local_values: Sequence[np.ndarray], aggregation: str
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """An ON_READ variable: each replica assigns its local value in ``Strategy.run``.

        Returns:
          (what each replica reads in replica context after its assign, the value read in
          cross-replica context).
        """
        raise NotImplementedError

    def sync_on_read_assign(
        self,
        initial: np.ndarray,
        local_values: Sequence[np.ndarray],
        value: np.ndarray,
        aggregation: str,
        kind: str,
    ) -> list[np.ndarray]:
        """Local assigns as in ``sync_on_read``, then ``kind(value)`` in cross-replica context.

        Returns:
          Every copy of the variable afterwards, replica order.
        """
        raise NotImplementedError

    def checkpoint_round_trip(
        self,
        copies: Sequence[np.ndarray],
        synchronization: str,
        aggregation: str,
        restore_replicas: int,
        directory: str,
    ) -> list[np.ndarray]:
        """Saves a distributed variable, restores it into a fresh one on other replicas.

        A variable with ``synchronization`` (``"ON_WRITE"`` or ``"ON_READ"``) and
        ``aggregation`` is created on ``len(copies)`` replicas; its components are made to
        hold ``copies`` (ON_READ: local assigns in ``Strategy.run``; ON_WRITE: the copies
        are equal, one cross-replica assign); ``tf.train.Checkpoint(v=...)`` writes it
        under ``directory``; a variable of the same kind, zero-initialised on
        ``restore_replicas`` replicas, restores it.

        Returns:
          The restored variable's components, replica order.
        """
        raise NotImplementedError
