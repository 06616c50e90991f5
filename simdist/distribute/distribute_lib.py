"""Where code runs: replica and cross-replica contexts, and ``get_strategy`` and friends.

* Outside any strategy: the default strategy is current, and the default replica context
  (one replica) is active.
* In ``with strategy.scope():`` (cross-replica context): ``get_replica_context()`` is None.
* In the function ``strategy.run`` runs: a :class:`ReplicaContext` per replica, whose
  ``all_reduce``, ``all_gather`` and ``merge_call`` are the collectives where replicas meet.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simdist.core import nest, profile_hook
from simdist.core.context import state
from simdist.core.convert import constant, convert_to_tensor
from simdist.core.tape import record_joint
from simdist.core.tensor import make_tensor
from simdist.distribute import runner as runner_lib
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.values import regroup, select_replica

__all__ = [
    "ReplicaContext",
    "get_strategy",
    "has_strategy",
    "get_replica_context",
    "get_cross_replica_context",
    "in_cross_replica_context",
]


def get_strategy():
    """The current strategy: the innermost entered scope's, or the default strategy."""
    if state.replica_context is not None:
        return state.replica_context.strategy
    if state.strategy_stack:
        return state.strategy_stack[-1]
    from simdist.distribute.default_strategy import default_strategy

    return default_strategy()


def has_strategy() -> bool:
    """True inside a non-default strategy's scope or replica function."""
    return state.replica_context is not None or bool(state.strategy_stack)


def in_cross_replica_context() -> bool:
    """True in a strategy's scope but outside its replica functions."""
    return state.replica_context is None and bool(state.strategy_stack)


def get_replica_context():
    """The current ReplicaContext; None in a cross-replica context; the default one outside."""
    if state.replica_context is not None:
        return state.replica_context
    if state.strategy_stack:
        return None
    from simdist.distribute.default_strategy import default_strategy

    return default_strategy()._default_replica_context


def get_cross_replica_context():
    """The strategy when in a cross-replica context (or outside any), else None."""
    if state.replica_context is not None:
        return None
    return get_strategy()


class ReplicaContext:
    """``tf.distribute.ReplicaContext``: what a replica knows, and how it meets the others.

    Every method that meets the other replicas (``all_reduce``, ``all_gather``,
    ``merge_call``) must be called by every replica, in the same order, with the same
    structure and shapes; otherwise the run stops with ``CollectiveMismatchError``.
    """

    def __init__(self, strategy, replica_id_in_sync_group: int, runner=None) -> None:
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group
        self._runner = runner

    @property
    def strategy(self):
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        """This replica's index in ``[0, num_replicas_in_sync)``, as an int32 scalar tensor."""
        offset = self._strategy.extended._replica_id_offset
        return constant(offset + self._replica_id, dtype="int32")

    @property
    def devices(self) -> tuple[str, ...]:
        return (self._strategy.extended._local_devices()[self._replica_id],)

    def __repr__(self) -> str:
        return (
            f"<ReplicaContext replica {self._replica_id} of {self.num_replicas_in_sync} "
            f"({type(self._strategy).__name__})>"
        )

    # --- collectives ----------------------------------------------------------------------
    def _collective(self, kind: str, signature, payload, combine: Callable):
        if self._runner is None:  # the default replica context: one replica, no peers
            return combine([payload])[0]
        return self._runner.collective(runner_lib.Collective(kind, signature, payload, combine))

    def all_reduce(self, reduce_op, value, options=None):
        """Reduce ``value`` (a nested structure of tensors) across replicas; all get the result.

        As in TF, the tensors of a structure are reduced together, as ``batch_reduce_to``
        reduces a step's gradients: packed into few collectives by the strategy's
        cross-device ops (``num_packs``) or its ``options`` (``bytes_per_pack``). Gradients
        flow through it: the gradient of a SUM all-reduce is the SUM all-reduce of the
        upstream gradients (MEAN: their MEAN), all of them in one call again.

        Raises:
            ValueError: an unknown ``reduce_op``; a ``None`` in ``value`` (a gradient of a
                variable this replica's loss does not use).
        """
        op = ReduceOp.from_value(reduce_op)
        leaves = nest.flatten(value)
        if any(v is None for v in leaves):
            position = next(i for i, v in enumerate(leaves) if v is None)
            replica = self._strategy.extended._replica_id_offset + self._replica_id
            raise ValueError(
                f"all_reduce on replica {replica} (replica_id_in_sync_group) got None at "
                f"position {position} of its value, which cannot be reduced: a gradient of a "
                "variable this replica's loss does not use is None. Every replica must pass "
                "tensors of the same structure: replace None by tf.zeros_like(variable)."
            )
        flat = [convert_to_tensor(v) for v in leaves]
        arrays = [t._value for t in flat]
        signature = (op.name, [(a.shape, a.dtype.name) for a in arrays])
        extended = self._strategy.extended

        def combine(per_replica: list[list[np.ndarray]]) -> list:
            n = len(per_replica)  # this worker's replicas; the strategy meets the others'
            values = [[per_replica[r][i] for r in range(n)] for i in range(len(arrays))]
            return [extended._batch_all_reduce_arrays(op, values, options)] * n

        reduced = self._collective("all_reduce", signature, arrays, combine)
        my_device = self.devices[0]
        outs = [make_tensor(a, device=my_device) for a in reduced]
        pairs = [(t, out) for t, out in zip(flat, outs, strict=True) if t.dtype.is_floating]
        if pairs:
            record_joint(
                "CollectiveReduce",
                [t for t, _ in pairs],
                [o for _, o in pairs],
                self._all_reduce_vjp(op, options),
            )
        return nest.pack_sequence_as(value, outs)

    def _all_reduce_vjp(self, op: ReduceOp, options):
        def vjp(wanted, *dys):
            # Every upstream gradient in one all-reduce, wanted or not: the replicas must
            # make the same call whichever inputs each one's tape asks for.
            grads = self.all_reduce(op, [make_tensor(dy) for dy in dys], options)
            return [g._value if w else None for w, g in zip(wanted, grads, strict=True)]

        return vjp

    def all_gather(self, value, axis: int, options=None):
        """Concatenate every replica's ``value`` along ``axis``, in replica order; all get it.

        Raises:
            InvalidArgumentError: a rank-0 value, or shapes that differ off ``axis``.
        """
        from simdist.distribute.gather import concat_components

        flat = [convert_to_tensor(v) for v in nest.flatten(value)]
        arrays = [t._value for t in flat]
        signature = (axis, [(a.ndim, a.dtype.name) for a in arrays])
        extended = self._strategy.extended

        def combine(per_replica: list[list[np.ndarray]]) -> list:
            n = len(per_replica)
            profile_hook.record_components("all_gather", per_replica)
            gathered = [
                concat_components(
                    extended._host_gather([per_replica[r][i] for r in range(n)]), axis
                )
                for i in range(len(per_replica[0]))
            ]
            return [gathered] * n

        gathered = self._collective("all_gather", signature, arrays, combine)
        my_device = self.devices[0]
        outs = [make_tensor(a, t.dtype, my_device) for a, t in zip(gathered, flat, strict=True)]
        return nest.pack_sequence_as(value, outs)

    def merge_call(self, merge_fn: Callable, args=(), kwargs=None):
        """Pause every replica, call ``merge_fn(strategy, *args, **kwargs)`` once in the
        cross-replica context with each argument regrouped into per-replica values, and
        give every replica its part of the result."""
        kwargs = kwargs or {}
        strategy = self._strategy
        signature = (getattr(merge_fn, "__qualname__", repr(merge_fn)),)

        def combine(per_replica: list) -> list:
            grouped_args = regroup([a for a, _ in per_replica])
            grouped_kwargs = regroup([k for _, k in per_replica])
            with _cross_replica(strategy):
                result = merge_fn(strategy, *grouped_args, **grouped_kwargs)
            return [select_replica(r, result) for r in range(len(per_replica))]

        return self._collective("merge_call", signature, (tuple(args), dict(kwargs)), combine)


class _cross_replica:
    """Run a block on the coordinator thread in ``strategy``'s cross-replica context."""

    def __init__(self, strategy) -> None:
        self._strategy = strategy
        self._saved = None

    def __enter__(self):
        self._saved = (state.replica_context, list(state.strategy_stack))
        state.replica_context = None
        if not state.strategy_stack or state.strategy_stack[-1] is not self._strategy:
            state.strategy_stack.append(self._strategy)
        return self

    def __exit__(self, *exc):
        state.replica_context, state.strategy_stack[:] = self._saved[0], self._saved[1]
