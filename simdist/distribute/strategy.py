"""``Strategy`` and ``StrategyExtended``: the API every tf.distribute strategy shares.

A strategy owns a tuple of replica devices and a way to make variables (mirrored, sync-on-
read, or one copy). ``run`` hands the step function to the lockstep replica runner;
``reduce``/``gather`` combine per-replica values on the host; ``extended`` carries the
lower-level operations (``reduce_to``, ``batch_reduce_to``, ``update``).
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable

import numpy as np

from simdist.core import nest, profile_hook
from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.device import DEFAULT_DEVICE, current_device
from simdist.core.device import device as device_scope
from simdist.core.random import RandomState, _current_state
from simdist.core.tensor import Tensor, make_tensor
from simdist.core.variables import Variable, variable_creator_scope
from simdist.distribute import distributed_variables as dv
from simdist.distribute import runner as runner_lib
from simdist.distribute.cross_device_ops import CrossDeviceOps, reduce_arrays
from simdist.distribute.distribute_lib import ReplicaContext
from simdist.distribute.gather import concat_components
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.values import DistributedValues, Mirrored, regroup, select_replica

__all__ = ["Strategy", "StrategyExtended"]


def _components(value) -> list:
    if isinstance(value, DistributedValues):
        return list(value.values)
    if isinstance(value, dv.DistributedVariable):
        return list(value.values)
    return [value]


def _replica_tensors(value, num_replicas: int) -> list[Tensor]:
    """One tensor per replica. A value held once (a plain tensor, or a variable stored in one
    place) stands for the same value on every replica.

    Raises:
        ValueError: a per-replica value with a different number of components.
    """
    tensors = [convert_to_tensor(c) for c in _components(value)]
    if isinstance(value, DistributedValues) and len(tensors) != num_replicas:
        raise ValueError(
            f"A {type(value).__name__} with {len(tensors)} components cannot be combined over "
            f"{num_replicas} replicas; distribute values with this strategy."
        )
    return tensors * num_replicas if len(tensors) == 1 else tensors


class StrategyExtended(abc.ABC):
    """``strategy.extended``: devices and the lower-level cross-replica operations."""

    def __init__(
        self,
        strategy,
        devices: tuple[str, ...],
        cross_device_ops: CrossDeviceOps,
        parameter_devices: tuple[str, ...] | None = None,
    ) -> None:
        self._container_strategy = strategy
        self._devices = tuple(devices)
        self._cross_device_ops_impl = cross_device_ops
        self._parameter_devices = tuple(parameter_devices or devices)

    @property
    def worker_devices(self) -> tuple[str, ...]:
        return self._devices

    @property
    def parameter_devices(self) -> tuple[str, ...]:
        return self._parameter_devices

    @property
    def _num_replicas_in_sync(self) -> int:
        return len(self._devices)

    # --- the worker's place in the cluster (one worker here; MultiWorker overrides) -------------
    @property
    def _num_local_replicas(self) -> int:
        """Replicas this worker runs (``strategy.run`` threads, local result components)."""
        return len(self._devices)

    _replica_id_offset = 0  # global id of this worker's first replica

    def _input_workers(self) -> tuple[int, int, Callable | None]:
        """``(num_workers, worker_index, has_value_reducer)`` for input distribution."""
        return 1, 0, None

    def _host_reduce(self, reduce_op: ReduceOp, arrays: list[np.ndarray]) -> np.ndarray:
        """The reduction of this worker's replicas' arrays with every other worker's (replica
        order): variables' aggregation and ``reduce(axis=...)`` use it."""
        return reduce_arrays(reduce_op, arrays)

    def _host_gather(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """Every replica's array in global replica order, given this worker's."""
        return list(arrays)

    def _host_sum(self, count: int) -> int:
        """The sum of an integer over the workers."""
        return count

    def _host_first(self, array: np.ndarray) -> np.ndarray:
        """Replica 0's copy of a value every worker holds (worker 0's)."""
        return array

    def _destination_devices(self, destinations) -> tuple[str, ...]:
        if destinations is None:
            return (current_device(),)
        if isinstance(destinations, str):
            return (destinations,)
        if isinstance(destinations, (DistributedValues, dv.DistributedVariable)):
            return tuple(c.device for c in _components(destinations))
        if isinstance(destinations, (Tensor, Variable)):
            return (destinations.device,)
        return tuple(destinations)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        """Reduce ``value`` (per-replica, or the same on every replica) to ``destinations``.

        Returns a ``Mirrored`` over the destination devices, or a tensor when there is one.

        Raises:
            ValueError: an unknown op, or SUM of a non-distributed value over several replicas.
        """
        op = ReduceOp.from_value(reduce_op)
        devices = self._destination_devices(destinations)
        if isinstance(value, (DistributedValues, dv.DistributedVariable)):
            tensors = _replica_tensors(value, self._num_local_replicas)
            reduced = self._cross_device_ops_impl.reduce_arrays(op, [t._value for t in tensors])
            dtype = None  # MEAN of integers is float (TF's true division)
        else:
            t = convert_to_tensor(value)
            if op is ReduceOp.SUM and self._num_replicas_in_sync > 1:
                raise ValueError(
                    f"A non-DistributedValues value {t!r} cannot be reduced with SUM over "
                    f"{self._num_replicas_in_sync} replicas: simdist cannot tell whether it is one "
                    "replica's value or all of them. Return it from strategy.run (a PerReplica) "
                    "or use ReduceOp.MEAN for a value that is the same on every replica."
                )
            reduced, dtype = t._value, t.dtype
        outs = [make_tensor(reduced, dtype, d) for d in devices]
        return outs[0] if len(outs) == 1 else Mirrored(outs)

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None) -> list:
        """``reduce_to`` for each ``(value, destinations)`` pair, in order."""
        return [self.reduce_to(reduce_op, v, d, options) for v, d in value_destination_pairs]

    def update(self, var, fn: Callable, args=(), kwargs=None, group: bool = True):
        """Run ``fn(component, *args_i, **kwargs_i)`` for each copy of ``var`` on its device.

        Raises:
            ValueError: ``var`` was not created under this strategy's scope.
        """
        kwargs = kwargs or {}
        if (
            not isinstance(var, dv.DistributedVariable)
            or var._strategy is not self._container_strategy
        ):
            return self._update_non_distributed(var, fn, args, kwargs)
        results = []
        for i, comp in enumerate(var.values):
            with device_scope(comp.device), dv.update_context(i):
                results.append(fn(comp, *select_replica(i, args), **select_replica(i, kwargs)))
        return regroup(results, Mirrored) if group else tuple(results)

    def _update_non_distributed(self, var, fn, args, kwargs):
        raise ValueError(
            f"Variable {getattr(var, 'name', var)!r} was not created under the scope of this "
            f"{type(self._container_strategy).__name__}, so its copies cannot be updated "
            "together. Create models, optimizers and metrics inside `with strategy.scope():`."
        )

    def variable_created_in_scope(self, v) -> bool:
        return isinstance(v, dv.DistributedVariable) and v._strategy is self._container_strategy

    @contextlib.contextmanager
    def colocate_vars_with(self, colocate_with_variable):
        yield

    # --- variable creation ---------------------------------------------------------------
    def _create_variable(self, next_creator: Callable, **kwargs):
        """Make one distributed variable; replicas that create one meet and share it."""
        ctx = state.replica_context
        if ctx is not None and ctx.strategy is self._container_strategy and ctx._runner is not None:
            n = self._num_local_replicas
            name = kwargs.get("name")

            def combine(payloads):
                from simdist.distribute.distribute_lib import _cross_replica

                # On the coordinator, inside run's scope: the strategy's creator is active.
                with _cross_replica(self._container_strategy):
                    variable = Variable(**payloads[0])
                return [variable] * n

            call = runner_lib.Collective("create_variable", (str(name),), kwargs, combine)
            return ctx._runner.collective(call)
        return self._create_distributed(next_creator, **kwargs)

    def _creator(self, next_creator, **kwargs):
        return self._create_variable(next_creator, **kwargs)

    @abc.abstractmethod
    def _create_distributed(self, next_creator: Callable, **kwargs):
        """Build the variable from ``next_creator`` calls (one per copy)."""


def _initial_value(kwargs: dict):
    init = kwargs.get("initial_value")
    if callable(init) and not isinstance(init, Tensor):
        init = init()
    return convert_to_tensor(init, dtype=kwargs.get("dtype"))


class Strategy:
    """``tf.distribute.Strategy``: the common API (see the module docstring)."""

    def __init__(self, extended: StrategyExtended) -> None:
        self._extended = extended
        self._replica_streams: dict[int, tuple[RandomState, int]] = {}
        self._scope_depth = 0

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        return self._extended._num_replicas_in_sync

    @property
    def cluster_resolver(self):
        return None

    # --- scope -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self):
        """Enter this strategy: variables made inside are distributed by it.

        Raises:
            ValueError: another strategy's scope is already active.
        """
        if state.strategy_stack and state.strategy_stack[-1] is not self:
            raise ValueError(
                f"Mixing different tf.distribute.Strategy objects: {self!r} is not "
                f"{state.strategy_stack[-1]!r}. Leave the other strategy's scope first."
            )
        reentered = any(entered is self for entered in state.strategy_stack)
        state.strategy_stack.append(self)
        try:
            if reentered:  # the creator is already active: variables must be mirrored once
                yield self
            else:
                with variable_creator_scope(self._extended._creator):
                    yield self
        finally:
            state.strategy_stack.pop()

    # --- running ----------------------------------------------------------------------------
    def run(self, fn: Callable, args=(), kwargs=None, options=None):
        """Run ``fn`` once per replica with each replica's part of ``args``; return per-replica.

        Raises:
            RuntimeError: called from inside a replica function.
            ValueError: a distributed argument with a different number of components.
        """
        kwargs = kwargs or {}
        if state.replica_context is not None:
            raise RuntimeError(
                "strategy.run was called inside a replica function (nested run). Call the "
                "function directly, or use get_replica_context().merge_call for cross-replica work."
            )
        n = self._extended._num_local_replicas
        for leaf in nest.flatten((args, kwargs)):
            if isinstance(leaf, DistributedValues) and len(leaf.values) != n:
                raise ValueError(
                    f"strategy.run got a distributed value with {len(leaf.values)} components, "
                    f"but the strategy has {n} replicas on this worker; distribute inputs with "
                    "this strategy."
                )
        per_replica = [
            (select_replica(i, tuple(args)), select_replica(i, kwargs)) for i in range(n)
        ]
        caller = (state.function_depth, list(state.variable_creators), _current_state())
        with self.scope():
            runner = runner_lib.ReplicaRunner(n, lambda i: self._enter_replica(i, runner, caller))
            with profile_hook.step(self):
                results = runner.run(fn, per_replica)
        return regroup(results)

    def _replica_stream(self, replica_id: int, host: RandomState) -> RandomState:
        """Replica r's random stream (r global): its own counters, restarted whenever the
        host's (``host``: the caller's process-wide state) are."""
        entry = self._replica_streams.get(replica_id)
        if entry is None or entry[1] != host.resets:
            stream = RandomState(host.global_seed, stream=replica_id + 1)
            self._replica_streams[replica_id] = (stream, host.resets)
            return stream
        return entry[0]

    def _random_state(self) -> dict:
        """The host's and every replica's random counters (JSON-able), for exact resumes."""
        host = _current_state()
        replicas = {
            str(r): stream.get_state()
            for r, (stream, resets) in sorted(self._replica_streams.items())
            if resets == host.resets
        }
        return {"host": host.get_state(), "replicas": replicas}

    def _restore_random_state(self, saved: dict) -> None:
        """Put back counters from :meth:`_random_state` (a restarted run continues the
        random sequences where the saved one was: dropout masks repeat exactly)."""
        host = _current_state()
        host.set_state(saved["host"])
        self._replica_streams = {}
        for r, state_ in saved["replicas"].items():
            stream = RandomState(host.global_seed, stream=int(r) + 1)
            stream.set_state(state_)
            self._replica_streams[int(r)] = (stream, host.resets)

    def _enter_replica(self, replica_id: int, runner, caller) -> Callable[[], None]:
        function_depth, creators, host_random = caller
        state.device_stack = [self._extended.worker_devices[replica_id]]
        state.strategy_stack = [self]
        state.replica_context = ReplicaContext(self, replica_id, runner)
        state.function_depth = function_depth
        own = self._extended._creator
        state.variable_creators = [c for c in creators if c != own] + [own]
        global_id = self._extended._replica_id_offset + replica_id
        state.random_state = self._replica_stream(global_id, host_random)

        def teardown() -> None:
            state.replica_context = None
            state.strategy_stack = []
            state.variable_creators = []

        return teardown

    # --- combining results -------------------------------------------------------------------
    def _require_cross_replica(self, method: str) -> None:
        if state.replica_context is not None:
            raise RuntimeError(
                f"strategy.{method} must be called in a cross-replica context (outside "
                "strategy.run); inside a replica function use "
                f"tf.distribute.get_replica_context().all_reduce / all_gather instead."
            )

    def reduce(self, reduce_op, value, axis=None):
        """Reduce a per-replica value to one tensor on the host (``tf.distribute.Strategy.reduce``).

        With ``axis``, each replica's value is first reduced along ``axis``; MEAN then divides
        the total by the number of elements along ``axis`` over all replicas, so partial and
        empty per-replica batches are weighted correctly.

        Raises:
            ValueError: an unknown ``reduce_op``.
            RuntimeError: called inside a replica function.
        """
        self._require_cross_replica("reduce")
        op = ReduceOp.from_value(reduce_op)
        if axis is None:
            return nest.map_structure(
                lambda v: self._extended.reduce_to(op, v, DEFAULT_DEVICE), value
            )
        return nest.map_structure(lambda v: self._reduce_along_axis(op, v, axis), value)

    def _reduce_along_axis(self, op: ReduceOp, value, axis: int):
        extended = self._extended
        tensors = _replica_tensors(value, extended._num_local_replicas)
        rank = tensors[0].ndim
        if not -rank <= axis < rank:
            raise ValueError(
                f"`axis` = {axis} out of range for `value` with rank {rank}; per-replica "
                f"values of rank {rank} take an axis in [{-rank}, {rank})."
            )
        ax = axis % rank
        sums = [np.sum(t._value, axis=ax, dtype=t._value.dtype) for t in tensors]
        total = extended._host_reduce(ReduceOp.SUM, sums)
        dtype = tensors[0].dtype
        if op is ReduceOp.MEAN:
            count = extended._host_sum(sum(t._value.shape[ax] for t in tensors))
            with np.errstate(invalid="ignore", divide="ignore"):  # no elements: NaN, as TF
                if dtype.is_integer:  # TF's truediv of integers gives float64
                    return make_tensor(total / np.float64(count), device=DEFAULT_DEVICE)
                return make_tensor(total / total.dtype.type(count), dtype, DEFAULT_DEVICE)
        return make_tensor(total, dtype, DEFAULT_DEVICE)

    def gather(self, value, axis: int):
        """Concatenate the replicas' values along ``axis`` on the host (replica order).

        Raises:
            InvalidArgumentError: rank-0 components or shapes that differ off ``axis``.
            RuntimeError: called inside a replica function.
        """
        self._require_cross_replica("gather")

        def gather_one(v):
            tensors = _replica_tensors(v, self._extended._num_local_replicas)
            arrays = self._extended._host_gather([t._value for t in tensors])
            return make_tensor(concat_components(arrays, axis), tensors[0].dtype, DEFAULT_DEVICE)

        return nest.map_structure(gather_one, value)

    def experimental_local_results(self, value) -> tuple:
        """The local components of ``value``, one per replica (a 1-tuple for plain values)."""
        flat = nest.flatten(value)
        if not any(isinstance(v, (DistributedValues, dv.DistributedVariable)) for v in flat):
            return (value,)
        n = max(len(_components(v)) for v in flat)
        return tuple(
            nest.map_structure(
                lambda v, i=i: _components(v)[min(i, len(_components(v)) - 1)], value
            )
            for i in range(n)
        )

    # --- input --------------------------------------------------------------------------------
    def experimental_distribute_dataset(self, dataset, options=None):
        from simdist.distribute.input_lib import DistributedDataset

        num_workers, worker_index, reducer = self._extended._input_workers()
        return DistributedDataset(
            dataset,
            self._extended.worker_devices,
            options=options,
            num_workers=num_workers,
            worker_index=worker_index,
            has_value_reducer=reducer,
        )

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        from simdist.distribute.input_lib import DistributedDatasetsFromFunction

        num_workers, worker_index, reducer = self._extended._input_workers()
        return DistributedDatasetsFromFunction(
            dataset_fn,
            self._extended.worker_devices,
            options=options,
            num_workers=num_workers,
            worker_index=worker_index,
            has_value_reducer=reducer,
        )

    def experimental_distribute_values_from_function(self, value_fn):
        from simdist.distribute.input_lib import distribute_values_from_function

        num_workers, worker_index, _ = self._extended._input_workers()
        return distribute_values_from_function(
            value_fn, self._extended.worker_devices, num_workers, worker_index
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} with {self.num_replicas_in_sync} replica(s)>"
