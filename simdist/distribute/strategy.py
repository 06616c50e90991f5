"""``Strategy``: the API every tf.distribute strategy shares (``StrategyExtended`` is in
:mod:`simdist.distribute.strategy_extended`).

A strategy owns a tuple of replica devices and a way to make variables (mirrored, sync-on-
read, or one copy). ``run`` hands the step function to the lockstep replica runner;
``reduce``/``gather`` combine per-replica values on the host; ``extended`` carries the
lower-level operations (``reduce_to``, ``batch_reduce_to``, ``update``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np

from simdist.core import nest, profile_hook, step_hooks
from simdist.core.context import state
from simdist.core.device import DEFAULT_DEVICE
from simdist.core.random import RandomState, _current_state
from simdist.core.tensor import make_tensor
from simdist.core.variables import variable_creator_scope
from simdist.distribute import distributed_variables as dv
from simdist.distribute import runner as runner_lib
from simdist.distribute.distribute_lib import ReplicaContext
from simdist.distribute.gather import concat_components
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.strategy_extended import (
    StrategyExtended,
    _components,
    _replica_tensors,
)
from simdist.distribute.values import DistributedValues, regroup, select_replica

__all__ = ["Strategy", "StrategyExtended"]


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
        return step_hooks.reported(self, self._extended._num_replicas_in_sync)

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
            TypeError: ``fn`` is not callable.
        """
        if not callable(fn):
            raise TypeError(
                f"strategy.run needs a callable (the replica function), got {fn!r}; pass the "
                "function itself and its inputs in args=, e.g. strategy.run(step, args=(x,))."
            )
        kwargs = kwargs or {}
        runner_lib.unwind_if_stopped()  # a straggler of a stopped cluster runs no more steps
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
        step_hooks.run_starting(self)
        per_replica = step_hooks.run_inputs(self, per_replica, (tuple(args), kwargs))
        caller = (state.function_depth, list(state.variable_creators), _current_state())
        with self.scope():
            runner = runner_lib.ReplicaRunner(n, lambda i: self._enter_replica(i, runner, caller))
            with profile_hook.step(self):
                results = runner.run(fn, per_replica)
        step_hooks.run_finished(self, results)
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
        state.device_stack = [self._extended._local_devices()[replica_id]]
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

        ``axis`` is an int or a list of ints (each replica's value is summed along all of
        them; MEAN divides by the product of their sizes over all replicas).

        Raises:
            ValueError: an unknown ``reduce_op``; an axis out of range or named twice.
            TypeError: an axis that is not an int.
            RuntimeError: called inside a replica function.
        """
        self._require_cross_replica("reduce")
        op = ReduceOp.from_value(reduce_op)
        if axis is None:
            return nest.map_structure(
                lambda v: self._extended.reduce_to(op, v, DEFAULT_DEVICE), value
            )
        return nest.map_structure(lambda v: self._reduce_along_axis(op, v, axis), value)

    def _reduce_along_axis(self, op: ReduceOp, value, axis):
        extended = self._extended
        tensors = _replica_tensors(value, extended._num_local_replicas)
        ax = _reduce_axes(axis, tensors[0].ndim)
        sums = [np.sum(t._value, axis=ax, dtype=t._value.dtype) for t in tensors]
        total = extended._host_reduce(ReduceOp.SUM, sums)
        dtype = tensors[0].dtype
        if op is ReduceOp.MEAN:
            count = extended._host_sum(
                sum(int(np.prod([t._value.shape[a] for a in ax], dtype=np.int64)) for t in tensors)
            )
            with np.errstate(invalid="ignore", divide="ignore"):  # no elements: NaN, as TF
                if dtype.is_integer:  # TF's truediv of integers gives float64
                    return make_tensor(total / np.float64(count), device=DEFAULT_DEVICE)
                return make_tensor(total / total.dtype.type(count), dtype, DEFAULT_DEVICE)
        return make_tensor(total, dtype, DEFAULT_DEVICE)

    def gather(self, value, axis: int):
        """Concatenate the replicas' values along ``axis`` on the host (replica order).

        A value that is not distributed (a plain tensor) is returned unchanged, as in TF,
        except on a multi-worker strategy, where it is the one local replica's value and is
        gathered over the workers.

        Raises:
            InvalidArgumentError: rank-0 components or shapes that differ off ``axis``.
            RuntimeError: called inside a replica function.
        """
        self._require_cross_replica("gather")

        def gather_one(v):
            plain = not isinstance(v, (DistributedValues, dv.DistributedVariable))
            if plain and not self._extended._plain_value_is_local_replica:
                return v
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
            self._extended._local_devices(),
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
            self._extended._local_devices(),
            options=options,
            num_workers=num_workers,
            worker_index=worker_index,
            has_value_reducer=reducer,
        )

    def experimental_distribute_values_from_function(self, value_fn):
        from simdist.distribute.input_lib import distribute_values_from_function

        num_workers, worker_index, _ = self._extended._input_workers()
        return distribute_values_from_function(
            value_fn, self._extended._local_devices(), num_workers, worker_index
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} with {self.num_replicas_in_sync} replica(s)>"


def _reduce_axes(axis, rank: int) -> tuple[int, ...]:
    """``Strategy.reduce``'s ``axis`` (an int or a list of ints, negative counting from the
    end, as TF's ``reduce_sum`` takes) as sorted non-negative axes.

    Raises:
        TypeError: an axis that is not an int (a string, a float, a bool).
        ValueError: an axis out of range, or one named twice.
    """
    items = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if isinstance(axis, bool) or not all(
        isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in items
    ):
        raise TypeError(
            f"`axis` must be an int or a list of ints, got {axis!r}; pass the batch axis, "
            "e.g. axis=0."
        )
    out = []
    for a in items:
        if not -rank <= a < rank:
            raise ValueError(
                f"`axis` = {a} out of range for `value` with rank {rank}; per-replica values "
                f"of rank {rank} take an axis in [{-rank}, {rank})."
            )
        out.append(int(a) % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"`axis` = {axis!r} names the same dimension twice; name each once.")
    return tuple(sorted(out))
