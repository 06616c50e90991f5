"""Distributed variables: one component variable per device, kept in sync by the strategy.

``MirroredVariable`` (ON_WRITE): every copy holds the same value. In a replica context,
reading gives this replica's copy; writing meets the other replicas and applies their
values combined by ``aggregation``: SUM adds them, MEAN averages them, ONLY_FIRST_REPLICA
takes replica 0's. With ``aggregation=NONE``, replicas that write *different* values are an
error in simdist; TF 2 lets the copies silently diverge, which simdist refuses on purpose.
In a cross-replica context a write goes to every copy. Inside ``extended.update`` (the
"update context" of one device) reads and writes touch that device's copy only.

``SyncOnReadVariable`` (ON_READ): each replica writes its own copy freely; a read in a
cross-replica context aggregates the copies (SUM, MEAN or ONLY_FIRST_REPLICA; NONE cannot be
read there). A cross-replica assign gives each copy ``value / num_replicas`` for SUM (so
that the aggregate reads back as ``value``) and ``value`` otherwise.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import _numpy_text, make_tensor, new_id
from simdist.core.variables import (
    Variable,
    VariableAggregation,
    VariableSynchronization,
    _as_enum,
)
from simdist.distribute import runner as runner_lib
from simdist.distribute.reduce_util import ReduceOp
from simdist.distribute.values import Mirrored

__all__ = ["DistributedVariable", "MirroredVariable", "SyncOnReadVariable", "update_context"]

_update = threading.local()


@contextlib.contextmanager
def update_context(index: int):
    """Reads and writes of distributed variables target component ``index`` in this block."""
    saved = getattr(_update, "index", None)
    _update.index = index
    try:
        yield
    finally:
        _update.index = saved


class DistributedVariable(Variable):
    """A variable with one component per device (``tf.distribute.DistributedValues``).

    Not created directly: a strategy's ``scope()`` makes ``tf.Variable(...)`` return one.
    """

    _type_name = "DistributedVariable"

    def __init__(self, strategy, components: list[Variable], aggregation) -> None:
        # Deliberately not Variable.__init__: the state lives in the components.
        self._strategy = strategy
        self._components = tuple(components)
        self._aggregation = aggregation
        self._handle_id = new_id()

    # --- which copy --------------------------------------------------------------------------
    def _index(self) -> int:
        if len(self._components) == 1:  # one copy: nothing to choose
            return 0
        idx = getattr(_update, "index", None)
        if idx is None:
            ctx = state.replica_context
            if ctx is not None and ctx._strategy is self._strategy:
                idx = ctx._replica_id
        return 0 if idx is None else idx

    def _local(self) -> Variable:
        return self._components[self._index()]

    def _in_replica_context(self) -> bool:
        ctx = state.replica_context
        return (
            ctx is not None
            and ctx.strategy is self._strategy
            and getattr(_update, "index", None) is None
        )

    @property
    def _id(self) -> int:  # the tape follows the copy this thread reads
        return self._local()._id

    @property
    def values(self) -> tuple[Variable, ...]:
        return self._components

    @property
    def _primary(self) -> Variable:
        return self._components[0]

    @property
    def distribute_strategy(self):
        return self._strategy

    # --- what it is ---------------------------------------------------------------------------
    name = property(lambda self: self._primary.name)
    dtype = property(lambda self: self._primary.dtype)
    shape = property(lambda self: self._primary.shape)
    trainable = property(lambda self: self._primary.trainable)
    synchronization = property(lambda self: self._primary.synchronization)
    aggregation = property(lambda self: self._aggregation)
    constraint = property(lambda self: self._primary.constraint)

    @property
    def device(self) -> str:
        return self._local().device

    def __repr__(self) -> str:
        body = ",\n".join(
            f"  {i}: <tf.Variable '{c.name}' shape={c.shape} dtype={c.dtype.name}, "
            f"numpy={_numpy_text(c._value, is_repr=True)}>"
            for i, c in enumerate(self._components)
        )
        return f"{self._type_name}:{{\n{body}\n}}"

    # --- reading ------------------------------------------------------------------------------
    def value(self):
        return self._local().value()

    read_value = value

    def _to_tensor(self, dtype=None):
        return self._local()._to_tensor(dtype)

    def numpy(self):
        return self._local().numpy()

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def _checkpoint_value(self) -> np.ndarray:
        """The one value a checkpoint stores for this variable."""
        return np.asarray(self._primary._value)

    # --- writing helpers -----------------------------------------------------------------------
    def _array(self, value, op: str) -> np.ndarray:
        return self._primary._checked_value(value, op)

    def _write_all(self, new: np.ndarray) -> None:
        for comp in self._components:
            comp._write(new, read_value=False)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._apply_write("assign", value, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._apply_write("assign_add", delta, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._apply_write("assign_sub", delta, read_value)

    def _meet(self, op: str, array: np.ndarray, combine):
        """Every replica arrives with ``array``; ``combine(arrays)`` runs once."""
        ctx = state.replica_context
        runner = ctx._runner

        def all_combine(payloads):
            combine(payloads)
            return [None] * len(payloads)

        signature = (self.name, array.shape, array.dtype.name)
        call = runner_lib.Collective(f"{self._type_name}.{op}", signature, array, all_combine)
        if runner is None:
            all_combine([array])
        else:
            runner.collective(call)


class MirroredVariable(DistributedVariable):
    """ON_WRITE: every copy holds the same value (see the module docstring)."""

    _type_name = "MirroredVariable"

    def _aggregate(self, arrays: list[np.ndarray], op: str) -> np.ndarray:
        agg = self._aggregation
        if agg is VariableAggregation.ONLY_FIRST_REPLICA:
            return self._strategy.extended._host_first(arrays[0])
        if agg is VariableAggregation.NONE:
            for r, a in enumerate(arrays[1:], start=1):
                if not np.array_equal(a, arrays[0]):
                    raise ValueError(
                        f"Replicas {op} different values to MirroredVariable {self.name} "
                        f"(replica 0 and replica {r} differ) and its aggregation is NONE, so the "
                        "copies would diverge. Create the variable with aggregation=SUM, MEAN "
                        "or ONLY_FIRST_REPLICA, or update it in a cross-replica context "
                        "(strategy.extended.update / merge_call). (TF silently lets the copies "
                        "diverge here; simdist stops.)"
                    )
            return arrays[0]
        if agg is VariableAggregation.MEAN and not self.dtype.is_floating:
            raise ValueError(
                f"Cannot update non-float variables with tf.VariableAggregation.MEAN "
                f"aggregation in replica context. Either change the variable dtype to float or "
                f"update it in cross-replica context (variable {self.name}, {self.dtype.name})."
            )
        return self._strategy.extended._host_reduce(ReduceOp.from_variable_aggregation(agg), arrays)

    def _replica_write(self, op: str, value) -> None:
        array = self._array(value, op)
        if op == "assign":
            self._meet(op, array, lambda arrays: self._write_all(self._aggregate(arrays, op)))
        else:
            sign = 1 if op == "assign_add" else -1

            def apply(arrays):
                delta = self._aggregate(arrays, op)
                self._write_all(self._primary._value + sign * delta)

            self._meet(op, array, apply)

    def _apply_write(self, op: str, value, read_value: bool):
        if getattr(_update, "index", None) is not None:
            getattr(self._local(), op)(value, read_value=False)
        elif self._in_replica_context():
            self._replica_write(op, value)
        else:
            array = self._array(value, op)
            if op == "assign":
                self._write_all(array)
            else:
                sign = 1 if op == "assign_add" else -1
                self._write_all(self._primary._value + sign * array)
            if read_value:  # TF: the copies' new values, a Mirrored of tensors
                return Mirrored(
                    [make_tensor(c._value, c.dtype, c.device) for c in self._components]
                )
            return None
        return self if read_value else None


class SyncOnReadVariable(DistributedVariable):
    """ON_READ: per-replica copies, aggregated when read across replicas."""

    _type_name = "SyncOnReadVariable"

    def _aggregated(self) -> np.ndarray:
        agg = self._aggregation
        extended = self._strategy.extended
        if agg is VariableAggregation.ONLY_FIRST_REPLICA:
            return extended._host_first(self._primary._value)
        op = ReduceOp.from_variable_aggregation(agg)  # NONE: ValueError, as TF
        return extended._host_reduce(op, [c._value for c in self._components])

    def _cross_replica(self) -> bool:
        return not self._in_replica_context() and getattr(_update, "index", None) is None

    def value(self):
        if self._cross_replica():
            return make_tensor(self._aggregated(), self.dtype)
        return self._local().value()

    read_value = value

    def _to_tensor(self, dtype=None):
        if self._cross_replica():
            return convert_to_tensor(self.value(), dtype=dtype)
        return self._local()._to_tensor(dtype)

    def numpy(self):
        return self.value().numpy()

    def _checkpoint_value(self) -> np.ndarray:
        return np.asarray(self._aggregated())

    def _apply_write(self, op: str, value, read_value: bool):
        if not self._cross_replica():
            getattr(self._local(), op)(value, read_value=False)
            return self if read_value else None
        n = self._strategy.num_replicas_in_sync  # every worker's copies share the total
        array = self._array(value, op)
        if self._aggregation is VariableAggregation.SUM:
            if op != "assign":
                raise ValueError(
                    f"SyncOnReadVariable does not support `{op}` in cross-replica context when "
                    "aggregation is set to `tf.VariableAggregation.SUM`; assign the new total "
                    "with `assign` instead."
                )
            # Integers: TF's truncating division (-7 over 2 replicas is -3 each, not -4).
            share = array / array.dtype.type(n) if array.dtype.kind == "f" else np.trunc(array / n)
            for comp in self._components:
                comp._write(np.asarray(share, array.dtype), read_value=False)
        else:
            for comp in self._components:
                getattr(comp, op)(array, read_value=False)
        return self if read_value else None


def check_synchronization(synchronization, name: str) -> VariableSynchronization:
    """Strategies mirror AUTO/ON_WRITE and sync ON_READ; NONE is refused (as TF)."""
    sync = _as_enum(VariableSynchronization, synchronization, "synchronization")
    if sync is VariableSynchronization.NONE:
        raise ValueError(
            "`NONE` variable synchronization mode is not supported with tf.distribute strategy. "
            f"Please change the `synchronization` for variable: {name}"
        )
    return sync
