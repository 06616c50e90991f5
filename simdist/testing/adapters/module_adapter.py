"""One Adapter for every module with TensorFlow's face (``simdist`` or ``tensorflow``).

``ModuleAdapter(tf, devices)`` performs each catalogue operation with the public API only
(``tf.distribute.MirroredStrategy``, ``strategy.run``, ``tf.Variable``, ``tf.data``,
``tf.train.Checkpoint``...), so the same code drives simdist and the real TensorFlow, and a
difference between the two is a difference of behaviour, never of test code.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from simdist.testing.adapters import worker_program
from simdist.testing.adapters.base import Adapter, Nest


def _numpy(value: Any) -> np.ndarray:
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


class ModuleAdapter(Adapter):
    """The catalogue's operations through a TensorFlow-shaped module.

    Args:
      tf: the module (``simdist`` or ``tensorflow``).
      devices: device names, at least ``max_replicas`` of them; replica r runs on
        ``devices[r]``.
      max_replicas: the most replicas an operation may use.
    """

    def __init__(self, tf: Any, devices: Sequence[str], max_replicas: int = 4) -> None:
        super().__init__(max_replicas)
        if len(devices) < max_replicas:
            raise ValueError(
                f"{len(devices)} devices for up to {max_replicas} replicas; configure more"
            )
        self.tf = tf
        self.devices = list(devices)
        self._strategies: dict[int, Any] = {}

    # --- strategies -----------------------------------------------------------------------
    def strategy_names(self) -> list[str]:
        return ["mirrored", "one_device"]

    def make_strategy(self, name: str, num_replicas: int) -> Any:
        if name == "mirrored":
            return self.tf.distribute.MirroredStrategy(self.devices[:num_replicas])
        if name == "one_device":
            return self.tf.distribute.OneDeviceStrategy(self.devices[0])
        raise ValueError(f"unknown strategy {name!r}; use one of {self.strategy_names()}")

    def _strategy(self, n: int) -> Any:
        if not 1 <= n <= self.max_replicas:
            raise ValueError(
                f"{n} replicas asked of an adapter with max_replicas={self.max_replicas}"
            )
        if n not in self._strategies:
            self._strategies[n] = self.make_strategy("mirrored", n)
        return self._strategies[n]

    def _distributed(self, strategy: Any, arrays: Sequence[Any]) -> Any:
        tensors = [self.tf.constant(np.asarray(a)) for a in arrays]
        return strategy.experimental_distribute_values_from_function(
            lambda ctx: tensors[ctx.replica_id_in_sync_group]
        )

    def _local(self, strategy: Any, value: Any) -> list[np.ndarray]:
        return [_numpy(v) for v in strategy.experimental_local_results(value)]

    # --- collectives ----------------------------------------------------------------------
    def reduce(self, op: str, per_replica: Sequence[np.ndarray], axis: Any) -> np.ndarray:
        strategy = self._strategy(len(per_replica))
        return _numpy(strategy.reduce(op, self._distributed(strategy, per_replica), axis=axis))

    def all_reduce(self, op: str, per_replica: Sequence[np.ndarray]) -> list[np.ndarray]:
        strategy = self._strategy(len(per_replica))

        def fn(x):
            return self.tf.distribute.get_replica_context().all_reduce(op, x)

        out = strategy.run(fn, args=(self._distributed(strategy, per_replica),))
        return self._local(strategy, out)

    def gather(self, per_replica: Sequence[np.ndarray], axis: int) -> np.ndarray:
        strategy = self._strategy(len(per_replica))
        return _numpy(strategy.gather(self._distributed(strategy, per_replica), axis=axis))

    def all_gather(self, per_replica: Sequence[np.ndarray], axis: int) -> list[np.ndarray]:
        strategy = self._strategy(len(per_replica))

        def fn(x):
            return self.tf.distribute.get_replica_context().all_gather(x, axis=axis)

        out = strategy.run(fn, args=(self._distributed(strategy, per_replica),))
        return self._local(strategy, out)

    # --- input ----------------------------------------------------------------------------
    def distribute_dataset(
        self,
        elements: Nest,
        global_batch_size: int,
        num_replicas: int,
        drop_remainder: bool,
        auto_shard_policy: str,
    ) -> list[list[Nest]]:
        tf = self.tf
        strategy = self._strategy(num_replicas)
        dataset = tf.data.Dataset.from_tensor_slices(elements).batch(
            global_batch_size, drop_remainder=drop_remainder
        )
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = getattr(
            tf.data.experimental.AutoShardPolicy, auto_shard_policy
        )
        dataset = dataset.with_options(options)
        steps = []
        for step in strategy.experimental_distribute_dataset(dataset):
            per_leaf = [self._local(strategy, t) for t in tf.nest.flatten(step)]
            steps.append(
                [
                    tf.nest.pack_sequence_as(step, [leaf[r] for leaf in per_leaf])
                    for r in range(num_replicas)
                ]
            )
        return steps

    def per_replica_batch_size(self, global_batch_size: int, num_replicas: int) -> int:
        context = self.tf.distribute.InputContext(num_replicas_in_sync=num_replicas)
        return int(context.get_per_replica_batch_size(global_batch_size))

    # --- losses and training --------------------------------------------------------------
    def compute_average_loss(
        self, per_replica_losses: Sequence[np.ndarray], global_batch_size: int | None
    ) -> list[np.ndarray]:
        strategy = self._strategy(len(per_replica_losses))

        def fn(x):
            return self.tf.nn.compute_average_loss(x, global_batch_size=global_batch_size)

        out = strategy.run(fn, args=(self._distributed(strategy, per_replica_losses),))
        return self._local(strategy, out)

    def train_step(
        self,
        params: Sequence[np.ndarray],
        per_replica_x: Sequence[np.ndarray],
        per_replica_y: Sequence[np.ndarray],
        lr: float,
        global_batch_size: int,
    ) -> tuple[np.ndarray, list[list[np.ndarray]]]:
        strategy = self._strategy(len(per_replica_x))
        return worker_program.train_step(
            self.tf, strategy, params, per_replica_x, per_replica_y, lr, global_batch_size
        )

    # --- variables ------------------------------------------------------------------------
    def _variable(self, strategy: Any, initial: Any, aggregation: str, sync: str = "AUTO"):
        tf = self.tf
        with strategy.scope():
            return tf.Variable(
                np.asarray(initial),
                synchronization=getattr(tf.VariableSynchronization, sync),
                aggregation=getattr(tf.VariableAggregation, aggregation),
            )

    def _components(self, strategy: Any, variable: Any) -> list[np.ndarray]:
        return [_numpy(c) for c in strategy.experimental_local_results(variable)]

    def mirrored_update(
        self,
        initial: np.ndarray,
        per_replica_values: Sequence[np.ndarray],
        aggregation: str,
        kind: str,
    ) -> list[np.ndarray]:
        strategy = self._strategy(len(per_replica_values))
        variable = self._variable(strategy, initial, aggregation)
        values = self._distributed(strategy, per_replica_values)
        strategy.run(lambda x: getattr(variable, kind)(x, read_value=False), args=(values,))
        return self._components(strategy, variable)

    def mirrored_update_cross_replica(
        self, initial: np.ndarray, value: np.ndarray, num_replicas: int, kind: str
    ) -> list[np.ndarray]:
        strategy = self._strategy(num_replicas)
        variable = self._variable(strategy, initial, "NONE")
        getattr(variable, kind)(self.tf.constant(np.asarray(value)), read_value=False)
        return self._components(strategy, variable)

    def _on_read(self, initial, local_values, aggregation):
        strategy = self._strategy(len(local_values))
        variable = self._variable(strategy, initial, aggregation, "ON_READ")

        def fn(x):
            variable.assign(x, read_value=False)
            return self.tf.identity(variable)

        reads = strategy.run(fn, args=(self._distributed(strategy, local_values),))
        return strategy, variable, self._local(strategy, reads)

    def sync_on_read(
        self, initial: np.ndarray, local_values: Sequence[np.ndarray], aggregation: str
    ) -> tuple[list[np.ndarray], np.ndarray]:
        _, variable, local_reads = self._on_read(initial, local_values, aggregation)
        return local_reads, _numpy(variable.read_value())

    def sync_on_read_assign(
        self,
        initial: np.ndarray,
        local_values: Sequence[np.ndarray],
        value: np.ndarray,
        aggregation: str,
        kind: str,
    ) -> list[np.ndarray]:
        strategy, variable, _ = self._on_read(initial, local_values, aggregation)
        getattr(variable, kind)(self.tf.constant(np.asarray(value)), read_value=False)
        return self._components(strategy, variable)

    def checkpoint_round_trip(
        self,
        copies: Sequence[np.ndarray],
        synchronization: str,
        aggregation: str,
        restore_replicas: int,
        directory: str,
    ) -> list[np.ndarray]:
        tf = self.tf
        first = np.asarray(copies[0])
        if synchronization == "ON_READ":
            strategy, variable, _ = self._on_read(np.zeros_like(first), copies, aggregation)
        else:
            strategy = self._strategy(len(copies))
            variable = self._variable(strategy, np.zeros_like(first), aggregation)
            variable.assign(tf.constant(first), read_value=False)
        path = tf.train.Checkpoint(v=variable).write(os.path.join(directory, "ckpt"))
        target = self._strategy(restore_replicas)
        restored = self._variable(target, np.zeros_like(first), aggregation, synchronization)
        tf.train.Checkpoint(v=restored).read(path).assert_consumed()
        return self._components(target, restored)
