"""``ParameterServerStrategy``: variables on ps tasks, steps run asynchronously by workers.

The cluster (from a ``TFConfigClusterResolver`` or any resolver with a ``ClusterSpec``) has
``worker`` and ``ps`` jobs; simdist starts every task virtually in this process. Variables
made in ``strategy.scope()`` are placed round-robin on the ps tasks
(``/job:ps/replica:0/task:<i>/device:CPU:0``, counting every variable and every shard);
with a ``variable_partitioner`` a variable of rank >= 1 whose partitioner asks for several
shards along axis 0 becomes a :class:`~simdist.distribute.sharded_variable.ShardedVariable`
of ``<name>/part_<i>`` shards. Steps are dispatched to workers by a
:class:`~simdist.distribute.coordinator.ClusterCoordinator`; inside a scheduled function,
``strategy.run`` runs one replica on that worker and ``optimizer.apply_gradients`` updates
the ps variables without waiting for the other workers (see ``ps_values`` for when reads
and writes happen).
"""

from __future__ import annotations

import logging

from simdist.core.convert import convert_to_tensor
from simdist.core.device import DEFAULT_DEVICE
from simdist.core.device import device as device_scope
from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.distribute.cross_device_ops import ReductionToOneDevice, reduce_arrays
from simdist.distribute.partitioners import shard_offsets
from simdist.distribute.ps_values import ClusterState, PSVariable
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.sharded_variable import ShardedVariable
from simdist.distribute.strategy import Strategy
from simdist.distribute.strategy_extended import StrategyExtended
from simdist.distribute.values import DistributedValues

__all__ = ["ParameterServerStrategy", "ParameterServerStrategyV2"]

_log = logging.getLogger("simdist")

_FIT_REFUSAL = (
    "Iterating a dataset that ParameterServerStrategy distributed on the coordinator is not "
    "supported (the data lives on the workers), so Keras Model.evaluate/predict do not run "
    "under ParameterServerStrategy in simdist; Model.fit does (with steps_per_epoch), and so "
    "does the custom loop: coordinator = tf.distribute.experimental.coordinator."
    "ClusterCoordinator(strategy); per_worker_dataset = coordinator.create_per_worker_dataset("
    "dataset_fn); iterator = iter(per_worker_dataset); coordinator.schedule(step_fn, "
    "args=(iterator,)); coordinator.join()."
)


class CoordinatorDataset:
    """A dataset distributed on the coordinator: ``create_per_worker_dataset`` takes it and
    builds it on every worker; iterating it on the coordinator is refused."""

    def __init__(self, strategy, build) -> None:
        self._strategy = strategy
        self._build = build  # () -> the worker's distributed dataset, called on a worker

    def __iter__(self):
        from simdist import errors

        raise errors.UnimplementedError(_FIT_REFUSAL)


def _cluster_counts(cluster_resolver) -> tuple[int, int]:
    """(workers, ps) of the resolver's cluster, validated as TF validates it.

    Raises:
        ValueError: an empty cluster, no ps or no worker job, or (TF_CONFIG) a malformed
            config, with the fix in the message.
    """
    from simdist.distribute.cluster_resolver import TFConfigClusterResolver
    from simdist.distribute.cluster_resolver.tf_config import load_tf_config, validate_tf_config

    if not hasattr(cluster_resolver, "cluster_spec"):
        raise TypeError(
            "ParameterServerStrategy needs a tf.distribute.cluster_resolver.ClusterResolver "
            f"(e.g. TFConfigClusterResolver()), got {type(cluster_resolver).__name__}."
        )
    if isinstance(cluster_resolver, TFConfigClusterResolver):
        validate_tf_config(load_tf_config(), strategy="parameter_server", require_task=False)
    spec = cluster_resolver.cluster_spec()
    if not spec.jobs:
        raise ValueError(
            "Cluster spec must be non-empty in `tf.distribute.cluster_resolver.ClusterResolver`."
            ' Give it "worker" and "ps" jobs, e.g. TF_CONFIG={"cluster": {"worker": '
            '["w0:2222", "w1:2222"], "ps": ["p0:2222"]}, "task": {"type": "chief", "index": 0}}.'
        )
    num_ps = spec.num_tasks("ps") if "ps" in spec.jobs else 0
    num_workers = spec.num_tasks("worker") if "worker" in spec.jobs else 0
    if num_ps < 1:
        raise ValueError('There must be at least one ps. Add a "ps" job to the cluster.')
    if num_workers < 1:
        raise ValueError('There must be at least one worker. Add a "worker" job to the cluster.')
    return num_workers, num_ps


class ParameterServerExtended(StrategyExtended):
    """Round-robin placement on ps tasks, optional sharding, one replica per worker."""

    def __init__(self, strategy, num_workers: int, num_ps: int, variable_partitioner) -> None:
        self._cluster = ClusterState(num_workers, num_ps)
        params = tuple(ClusterState.ps_device(i) for i in range(num_ps))
        super().__init__(strategy, (DEFAULT_DEVICE,), ReductionToOneDevice(), params)
        self._num_workers = num_workers
        self._num_ps = num_ps
        self._variable_partitioner = variable_partitioner
        self._variable_count = 0
        self._used_with_coordinator = False

    @property
    def worker_devices(self) -> tuple[str, ...]:
        """The device of the worker running now (the coordinator's outside closures)."""
        worker = self._cluster.worker
        return (DEFAULT_DEVICE if worker is None else ClusterState.worker_device(worker),)

    @property
    def _num_replicas_in_sync(self) -> int:
        return 1

    # --- variables ------------------------------------------------------------------------
    def _round_robin(self, next_creator, **kwargs) -> PSVariable:
        index = self._variable_count % self._num_ps
        with device_scope(ClusterState.ps_device(index)):
            variable = next_creator(**kwargs)
        self._variable_count += 1
        return PSVariable(self._container_strategy, variable, self._cluster)

    def _create_distributed(self, next_creator, **kwargs):
        if self._variable_partitioner is None:
            return self._round_robin(next_creator, **kwargs)
        name, dtype, shape = kwargs.get("name"), kwargs.get("dtype"), kwargs.get("shape")
        initial_value = kwargs.get("initial_value")
        if initial_value is None:
            raise ValueError(
                "It looks like you are using `ParameterServerStrategy` with a "
                "`variable_partitioner`, and trying to create a variable without specifying "
                "`initial_value`. This is not allowed. Please specify the `initial_value`."
            )
        if callable(initial_value) and not isinstance(initial_value, Tensor):
            initial_value = initial_value()
        initial = convert_to_tensor(initial_value, dtype=dtype)
        shape = initial.shape if shape is None else as_shape(shape)
        if shape.rank == 0:
            return self._round_robin(next_creator, **dict(kwargs, initial_value=initial))
        partitions = self._variable_partitioner(shape=shape, dtype=initial.dtype)
        partitions = list(partitions) if partitions else []
        if not partitions or partitions[0] == 0 or any(p != 1 for p in partitions[1:]):
            raise ValueError(
                "variable_partitioner must return a list/tuple whose elements are 1 besides "
                f"the first element (non-zero), got: {partitions!r}"
            )
        if partitions[0] == 1:
            return self._round_robin(next_creator, **dict(kwargs, initial_value=initial))
        num_shards = min(int(partitions[0]), shape[0])
        offsets = shard_offsets(shape[0], num_shards)
        full = initial._value
        shards = []
        for i in range(num_shards):
            part = full[offsets[i] : offsets[i + 1]]
            shard_kwargs = dict(
                kwargs, initial_value=convert_to_tensor(part, dtype=initial.dtype), shape=None
            )
            if name is not None:
                shard_kwargs["name"] = f"{name}/part_{i}"
            shards.append(self._round_robin(next_creator, **shard_kwargs))
        return ShardedVariable(shards, name=name or "Variable")

    def variable_created_in_scope(self, v) -> bool:
        strategy = getattr(v, "_strategy", None)
        return isinstance(v, (PSVariable, ShardedVariable)) and strategy is self._container_strategy

    def update(self, var, fn, args=(), kwargs=None, group: bool = True):
        """Run ``fn(var, *args)``; inside a closure also rerun it atomically at commit."""
        kwargs = kwargs or {}
        txn = self._cluster.transaction
        if txn is not None and not txn.committing:
            txn.log_update(var, fn, tuple(args), dict(kwargs))
            with txn.quiet():
                return fn(var, *args, **kwargs)
        return fn(var, *args, **kwargs)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """As TF's PS strategy: distributed values are reduced, anything else passes as is."""
        op = ReduceOp.from_value(reduce_op)
        if not isinstance(value, DistributedValues):
            return value
        tensors = [convert_to_tensor(c) for c in value.values]
        if len(tensors) == 1:
            return tensors[0]
        reduced = reduce_arrays(op, [t._value for t in tensors])
        return convert_to_tensor(reduced)


class ParameterServerStrategyV2(Strategy):
    """Asynchronous training with parameter servers (``tf.distribute.experimental``).

    ``ParameterServerStrategy(cluster_resolver, variable_partitioner=None)``.

    Args:
        cluster_resolver: a cluster resolver whose cluster has at least one ``worker`` and
            one ``ps`` task (``TFConfigClusterResolver()`` reads ``TF_CONFIG``).
        variable_partitioner: a ``tf.distribute.experimental.partitioners.Partitioner`` (or
            any ``(shape, dtype) -> counts`` callable); None: no sharding.

    Raises:
        ValueError: an empty cluster, no ``ps`` or no ``worker`` job, a malformed TF_CONFIG.
        TypeError: ``cluster_resolver`` is not a cluster resolver.
    """

    def __init__(self, cluster_resolver, variable_partitioner=None) -> None:
        num_workers, num_ps = _cluster_counts(cluster_resolver)
        self._cluster_resolver = cluster_resolver
        self._num_workers = num_workers
        self._num_ps = num_ps
        self._cluster_coordinator = None
        self._should_use_with_coordinator = True
        self._is_parameter_server_strategy_v2 = True
        extended = ParameterServerExtended(self, num_workers, num_ps, variable_partitioner)
        super().__init__(extended)
        _log.info(
            "`tf.distribute.experimental.ParameterServerStrategy` is initialized with "
            "cluster_spec: %s",
            cluster_resolver.cluster_spec(),
        )

    @property
    def cluster_resolver(self):
        return self._cluster_resolver

    def _on_worker(self) -> bool:
        return self._extended._cluster.worker is not None

    def run(self, fn, args=(), kwargs=None, options=None):
        """Run ``fn`` as the one replica of the worker running the scheduled function.

        Outside ``ClusterCoordinator.schedule`` it runs on the coordinator, with TF's warning.
        """
        if not self._on_worker():
            _log.warning(
                "A `tf.distribute.experimental.ParameterServerStrategy` method is invoked "
                "without using `ClusterCoordinator.schedule`; it runs on the coordinator. "
                "Dispatch steps to workers with coordinator.schedule(step_fn, ...)."
            )
        return super().run(fn, args, kwargs, options)

    def experimental_distribute_dataset(self, dataset, options=None):
        """On a worker: that worker's distributed dataset; on the coordinator: a dataset to
        hand to ``ClusterCoordinator.create_per_worker_dataset``."""
        from simdist.distribute.input_lib import DistributedDataset

        def build():
            return DistributedDataset(dataset, self._extended._local_devices(), options=options)

        return build() if self._on_worker() else CoordinatorDataset(self, build)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """As TF: one input pipeline per worker (``InputContext(1, 0, 1)``), built on the
        worker; on the coordinator, a dataset for ``create_per_worker_dataset``."""
        from simdist.distribute.input_lib import DistributedDatasetsFromFunction

        def build():
            return DistributedDatasetsFromFunction(
                dataset_fn, self._extended._local_devices(), options=options
            )

        return build() if self._on_worker() else CoordinatorDataset(self, build)

    def __repr__(self) -> str:
        return (
            f"<ParameterServerStrategy with {self._num_workers} worker(s) and "
            f"{self._num_ps} ps task(s)>"
        )


ParameterServerStrategy = ParameterServerStrategyV2
"""TF's public name of ``ParameterServerStrategyV2`` (the class's own name in TF too)."""
