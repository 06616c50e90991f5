"""``StrategyExtended``: a strategy's devices and its lower-level cross-replica operations.

``reduce_to``, ``batch_reduce_to`` and ``update`` (TF's names), variable creation through
the strategy's creator (replicas that create a variable inside ``run`` meet and share it),
and the hooks by which a multi-worker strategy reaches the other workers (``_host_*``,
``_input_workers``; one worker here).
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable

import numpy as np

from simdist.core import nest
from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.device import current_device
from simdist.core.device import device as device_scope
from simdist.core.tensor import Tensor, make_tensor
from simdist.core.variables import Variable
from simdist.distribute import distributed_variables as dv
from simdist.distribute import runner as runner_lib
from simdist.distribute.cross_device_ops import CrossDeviceOps, reduce_arrays
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.values import DistributedValues, Mirrored, regroup, select_replica

__all__ = ["StrategyExtended"]


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


def _read_if_variable(value):
    return convert_to_tensor(value) if isinstance(value, Variable) else value


class StrategyExtended(abc.ABC):
    """``strategy.extended``: devices and the lower-level cross-replica operations."""

    # True where TF's reduce_to returns a non-distributed value as it is (the default and
    # one-device strategies: ``get_strategy().reduce("SUM", 1., axis=None)`` is ``1.0``).
    _passes_plain_values_through = False
    # True where a plain value stands for this worker's one replica (multi-worker strategies)
    _plain_value_is_local_replica = False

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
        """The devices the replicas of this worker run on, fully qualified."""
        return self._devices

    @property
    def parameter_devices(self) -> tuple[str, ...]:
        """The devices variables are placed on, fully qualified."""
        return self._parameter_devices

    def _local_devices(self) -> tuple[str, ...]:
        """The replicas' devices, for simdist's own use (the default strategy has one even
        though its public ``worker_devices`` raises, as TF's)."""
        return self.worker_devices

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
        distributed = isinstance(value, (DistributedValues, dv.DistributedVariable))
        if not distributed and self._passes_plain_values_through:
            return value  # TF's default and one-device strategies return it unchanged
        devices = self._destination_devices(destinations)
        if distributed:
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
        """``reduce_to`` for each ``(value, destinations)`` pair, in order.

        When every value is distributed and all go to the same devices (a step's gradients
        for mirrored variables), they are reduced together by the cross-device ops'
        ``batch_reduce_arrays``, which packs them as TF does; otherwise one by one (always
        one by one for a strategy with a ``reduce_to`` of its own).
        """
        op = ReduceOp.from_value(reduce_op)
        pairs = list(value_destination_pairs)
        distributed = (DistributedValues, dv.DistributedVariable)
        if (
            len(pairs) < 2
            or type(self).reduce_to is not StrategyExtended.reduce_to
            or not all(isinstance(v, distributed) for v, _ in pairs)
        ):
            return [self.reduce_to(op, v, d, options) for v, d in pairs]
        devices = [self._destination_devices(d) for _, d in pairs]
        if any(d != devices[0] for d in devices[1:]):
            return [self.reduce_to(op, v, d, options) for v, d in pairs]
        n = self._num_local_replicas
        values = [[t._value for t in _replica_tensors(v, n)] for v, _ in pairs]
        reduced = self._batch_all_reduce_arrays(op, values, options)
        outs = []
        for array in reduced:
            copies = [make_tensor(array, None, d) for d in devices[0]]
            outs.append(copies[0] if len(copies) == 1 else Mirrored(copies))
        return outs

    def _batch_all_reduce_arrays(
        self, op: ReduceOp, values: list[list[np.ndarray]], options=None
    ) -> list[np.ndarray]:
        """Several values reduced at once over every replica (``values[i]``: value i's array
        on each local replica); one result per value, in order.

        What ``batch_reduce_to`` and ``ReplicaContext.all_reduce`` of a list share: packed
        by the cross-device ops (``num_packs``) as TF packs them, one by one for a single
        value or a strategy with a ``reduce_to`` of its own.
        """
        cdo = self._cross_device_ops_impl
        if len(values) < 2 or type(self).reduce_to is not StrategyExtended.reduce_to:
            return [cdo.reduce_arrays(op, arrays) for arrays in values]
        return cdo.batch_reduce_arrays(op, values)

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
        if not group:
            return tuple(results)
        # TF: with group=True the copies' new values come back as tensors, not variables
        return regroup(nest.map_structure(_read_if_variable, results), Mirrored)

    def _update_non_distributed(self, var, fn, args, kwargs):
        raise ValueError(
            f"Variable {getattr(var, 'name', var)!r} was not created under the scope of this "
            f"{type(self._container_strategy).__name__}, so its copies cannot be updated "
            "together. Create models, optimizers and metrics inside `with strategy.scope():`."
        )

    def variable_created_in_scope(self, v) -> bool:
        return isinstance(v, dv.DistributedVariable) and v._strategy is self._container_strategy

    def colocate_vars_with(self, colocate_with_variable):
        """A scope in which new variables are placed with ``colocate_with_variable`` (every
        simdist copy already sits on its replica's device, so it changes no placement).

        Raises:
            RuntimeError: not inside this strategy's ``scope()``, as in TF.
        """
        stack = state.strategy_stack
        if not stack or stack[-1] is not self._container_strategy:
            raise RuntimeError(
                f'Need to be inside "with strategy.scope()" for {self._container_strategy!r}'
            )
        return contextlib.nullcontext()

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
