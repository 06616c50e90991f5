"""The simdist adapter: the catalogue run against ``import simdist as tf`` on virtual GPUs,
and on virtual clusters (``simdist.sim.launch``) for the multi-worker properties."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from simdist.testing.adapters import worker_program
from simdist.testing.adapters.cluster_adapter import ClusterAdapter
from simdist.testing.adapters.module_adapter import ModuleAdapter, _numpy


class _TPUSession:
    """A TPU system initialized for one accelerator type, and its TPUStrategy objects.

    Initializing another accelerator's TPU system replaces the previous one (as in TF), so
    strategies are made afresh whenever the accelerator changes.
    """

    def __init__(self, tf) -> None:
        self.tf = tf
        self.accelerator: str | None = None
        self.resolver = None

    def strategy(self, accelerator: str, host_order_seed: int | None = None):
        tf = self.tf
        if accelerator != self.accelerator:
            self.resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=accelerator)
            tf.config.experimental_connect_to_cluster(self.resolver)
            tf.tpu.experimental.initialize_tpu_system(self.resolver)
            self.accelerator = accelerator
        return tf.distribute.TPUStrategy(self.resolver, simdist_host_order_seed=host_order_seed)


class _TPUAndPSOperations:
    """The TPU (``tpu_*``) and parameter-server operations, through simdist's public API.

    TPU operations initialize simdist's simulated TPU system for the slice asked for (which
    replaces any TPU system initialized before, as TF does); parameter-server operations
    build a fresh in-process ``ParameterServerStrategy`` cluster for every call.
    """

    tf: Any
    _tpu_session: _TPUSession | None = None

    @property
    def _tpu(self) -> _TPUSession:
        if self._tpu_session is None:
            self._tpu_session = _TPUSession(self.tf)
        return self._tpu_session

    # --- TPU ----------------------------------------------------------------------------------
    def tpu_num_replicas(self, accelerator):
        return int(self._tpu.strategy(accelerator).num_replicas_in_sync)

    def _tpu_values(self, strategy, per_replica):
        tensors = [self.tf.constant(np.asarray(v)) for v in per_replica]
        if len(tensors) != strategy.num_replicas_in_sync:
            raise ValueError(
                f"{len(tensors)} values for {strategy.num_replicas_in_sync} TPU replicas"
            )
        return strategy.experimental_distribute_values_from_function(
            lambda ctx: tensors[ctx.replica_id_in_sync_group]
        )

    def tpu_gather(self, accelerator, per_replica, axis):
        strategy = self._tpu.strategy(accelerator)
        return _numpy(strategy.gather(self._tpu_values(strategy, per_replica), axis=axis))

    def tpu_all_gather(self, accelerator, per_replica, axis):
        tf = self.tf
        strategy = self._tpu.strategy(accelerator)
        values = self._tpu_values(strategy, per_replica)

        @tf.function
        def step():
            return strategy.run(
                lambda v: tf.distribute.get_replica_context().all_gather(v, axis=axis),
                args=(values,),
            )

        return [_numpy(v) for v in strategy.experimental_local_results(step())]

    def tpu_run(self, accelerator, in_function):
        tf = self.tf
        strategy = self._tpu.strategy(accelerator)

        def replica_fn():
            return tf.distribute.get_replica_context().replica_id_in_sync_group

        if in_function:
            out = tf.function(lambda: strategy.run(replica_fn))()
        else:
            out = strategy.run(replica_fn)
        return [int(_numpy(v)) for v in strategy.experimental_local_results(out)]

    def tpu_steps(
        self,
        accelerator,
        elements,
        global_batch_size,
        drop_remainder,
        dynamic_batch_size,
        host_order_seed,
    ):
        tf = self.tf
        strategy = self._tpu.strategy(accelerator, host_order_seed)
        options = tf.distribute.RunOptions(
            experimental_enable_dynamic_batch_size=dynamic_batch_size
        )
        dataset = tf.data.Dataset.from_tensor_slices(np.asarray(elements, np.int64)).batch(
            global_batch_size, drop_remainder=drop_remainder
        )

        def replica_fn(x):
            squares = tf.square(tf.cast(x, tf.float64))
            return x, tf.nn.compute_average_loss(squares, global_batch_size=global_batch_size)

        @tf.function
        def step(batch):
            x, loss = strategy.run(replica_fn, args=(batch,), options=options)
            return x, strategy.reduce("SUM", loss, axis=None)

        steps = []
        log = logging.getLogger("simdist")
        level = log.level
        log.setLevel(logging.ERROR)  # AUTO on in-memory data warns on every multi-host slice
        try:
            distributed = strategy.experimental_distribute_dataset(dataset)
        finally:
            log.setLevel(level)
        for batch in distributed:
            x, loss = step(batch)
            steps.append(
                ([_numpy(v) for v in strategy.experimental_local_results(x)], _numpy(loss))
            )
        return steps

    # --- parameter servers ------------------------------------------------------------------------
    def _ps_strategy(self, workers: int, num_ps: int, partitioner=None):
        from simdist.distribute.cluster_resolver import ClusterSpec, SimpleClusterResolver

        spec = ClusterSpec(
            {
                "chief": ["chief:2222"],
                "worker": [f"worker{i}:2222" for i in range(workers)],
                "ps": [f"ps{i}:2222" for i in range(num_ps)],
            }
        )
        return self.tf.distribute.experimental.ParameterServerStrategy(
            SimpleClusterResolver(spec), variable_partitioner=partitioner
        )

    def _coordinator(self, strategy, **kwargs):
        return self.tf.distribute.experimental.coordinator.ClusterCoordinator(strategy, **kwargs)

    def partitioner_shards(self, kind, params, shape, dtype):
        tf = self.tf
        make = getattr(tf.distribute.experimental.partitioners, f"{kind}Partitioner")
        return [int(c) for c in make(**params)(tf.TensorShape(list(shape)), getattr(tf, dtype))]

    def sharded_variable(self, initial, num_shards, delta, grad, lr):
        tf = self.tf
        partitioner = tf.distribute.experimental.partitioners.FixedShardsPartitioner(num_shards)
        strategy = self._ps_strategy(1, 2, partitioner)
        with strategy.scope():
            v = tf.Variable(np.asarray(initial, np.float64))
            optimizer = tf.keras.optimizers.SGD(learning_rate=lr)
        parts = list(getattr(v, "variables", [v]))
        shards = [_numpy(p) for p in parts]
        read = _numpy(tf.convert_to_tensor(v))
        v.assign_add(tf.constant(np.asarray(delta, np.float64)))
        after_add = _numpy(tf.convert_to_tensor(v))
        g = tf.constant(np.asarray(grad, np.float64))

        @tf.function
        def sgd_step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(v * g)
            grads = tape.gradient(loss, parts)
            optimizer.apply_gradients(zip(grads, parts, strict=True))

        coordinator = self._coordinator(strategy)
        coordinator.schedule(sgd_step)
        coordinator.join()
        return {
            "shards": shards,
            "read": read,
            "after_assign_add": after_add,
            "after_sgd": _numpy(tf.convert_to_tensor(v)),
        }

    def ps_counter_closures(self, workers, closures, kills, seed):
        from simdist.distribute.faults import FaultPlan

        tf = self.tf
        plan = FaultPlan()
        for worker, (step, restart_after) in sorted(kills.items()):
            plan.kill_worker(worker, step, restart_after)
        strategy = self._ps_strategy(workers, 1)
        coordinator = self._coordinator(strategy, simdist_seed=seed, simdist_faults=plan)
        with strategy.scope():
            counter = tf.Variable(np.int64(0))

        @tf.function
        def add_one(i):
            counter.assign_add(np.int64(1))
            return i

        results = [coordinator.schedule(add_one, args=(tf.constant(i),)) for i in range(closures)]
        coordinator.join()
        return _numpy(counter), [int(_numpy(r.fetch())) for r in results]

    def ps_async_run(self, workers, closures, seed):
        tf = self.tf
        strategy = self._ps_strategy(workers, 1)
        coordinator = self._coordinator(strategy, simdist_seed=seed)
        with strategy.scope():
            x = tf.Variable(np.float64(1.0))

        @tf.function
        def update(i):
            read = x.read_value()
            x.assign_add(0.5 * read + tf.cast(i, tf.float64))
            return read

        results = [coordinator.schedule(update, args=(tf.constant(i),)) for i in range(closures)]
        coordinator.join()
        return np.asarray([_numpy(x)] + [_numpy(r.fetch()) for r in results], np.float64)

    def ps_failure_run(self, workers, num_ps, closures, failing_ps, after_closures):
        from simdist.distribute.faults import FaultPlan

        tf = self.tf
        strategy = self._ps_strategy(workers, num_ps)
        plan = FaultPlan().kill_ps(failing_ps, after_closures)
        coordinator = self._coordinator(strategy, simdist_faults=plan)
        with strategy.scope():
            variables = [tf.Variable(np.float64(0.0)) for _ in range(num_ps)]

        @tf.function
        def add_one():
            for v in variables:
                v.assign_add(np.float64(1.0))

        results = [coordinator.schedule(add_one) for _ in range(closures)]
        coordinator.join()
        for r in results:
            r.fetch()


class SimdistAdapter(ClusterAdapter, _TPUAndPSOperations, ModuleAdapter):
    """simdist's MirroredStrategy over virtual ``GPU:0 .. GPU:{max_replicas-1}``.

    Creating it raises the host's virtual GPU count to ``max_replicas`` when it is lower
    (``simdist.config.set_virtual_devices``); it never lowers it. Multi-worker operations
    run ``MultiWorkerMirroredStrategy`` on a virtual cluster of ``simdist.sim.launch``
    (up to ``max_workers`` workers of ``max_devices_per_worker`` virtual GPUs).
    """

    name = "simdist"

    def __init__(self, max_replicas: int = 4) -> None:
        import simdist

        have = len(simdist.config.list_logical_devices("GPU"))
        if have < max_replicas:
            simdist.config.set_virtual_devices(gpus=max_replicas)
        super().__init__(simdist, [f"GPU:{i}" for i in range(max_replicas)], max_replicas)

    def strategy_names(self) -> list[str]:
        return ["mirrored", "one_device", "central_storage", "default"]

    def make_strategy(self, name: str, num_replicas: int):
        if name == "central_storage":
            return self.tf.distribute.experimental.CentralStorageStrategy(
                self.devices[:num_replicas]
            )
        if name == "default":
            return self.tf.distribute.get_strategy()
        return super().make_strategy(name, num_replicas)

    def run_on_cluster(self, workers, devices_per_worker, program, kwargs):
        from simdist.sim import launch

        log = logging.getLogger("simdist")
        level = log.level
        if program == "auto_shard":  # AUTO on in-memory data warns, as TF does, every time
            log.setLevel(logging.ERROR)
        try:
            return launch(
                worker_program.run_with_new_strategy,
                workers=workers,
                devices_per_worker=devices_per_worker,
                args=(self.tf, program, kwargs),
            )
        finally:
            log.setLevel(level)
