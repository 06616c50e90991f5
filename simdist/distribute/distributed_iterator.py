"""The steps of a distributed dataset: ``DistributedIterator``, the per-replica spec and packing.

Each step of a :class:`DistributedIterator` is a ``PerReplica`` structure (a plain one with a
single replica on a single worker, as TF) whose components are Tensors on the replicas'
devices (on their host CPU with ``experimental_fetch_to_device=False``).

**End of data** (TF's partial-batch handling, tensorflow/python/distribute/input_lib.py): a
step is produced while at least one replica gets data; replicas whose input has run out
get an *empty* batch shaped from the element spec (leading and unknown dimensions 0). TF
skips this handling when the per-replica spec is fully static on a single worker, or the
input is infinite: there, a step where any replica lacks data ends the iteration.
``get_next_as_optional`` always handles partial batches (unless the input is infinite).
With several workers the decision "does any replica have data" is global; pass
``has_value_reducer`` (an all-reduce SUM over workers of the local count) to get it.

Values are produced on demand, in the calling thread (see :mod:`simdist.distribute.input_lib`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from simdist import errors
from simdist.core import nest
from simdist.core.context import state
from simdist.core.function import InputSignatureError
from simdist.core.tensor_spec import TensorSpec
from simdist.core.trackable import Trackable
from simdist.data import structure
from simdist.data.dataset import INFINITE
from simdist.data.iterator import Optional
from simdist.data.iterator_state import ITERATOR_STATE, Position
from simdist.distribute import rebatch
from simdist.distribute.values import PerReplica

__all__ = ["DistributedIterator", "PerReplicaSpec", "pack_per_replica", "round_robin"]


class PerReplicaSpec:
    """The type of a ``PerReplica`` value: one spec per replica (``values.PerReplicaSpec``)."""

    def __init__(self, *value_specs: TensorSpec) -> None:
        self._value_specs = tuple(value_specs)

    @property
    def value_specs(self) -> tuple:
        return self._value_specs

    def __eq__(self, other) -> bool:
        if not isinstance(other, PerReplicaSpec):
            return NotImplemented
        return self._value_specs == other._value_specs

    def __hash__(self) -> int:
        return hash(self._value_specs)

    def __repr__(self) -> str:
        return f"PerReplicaSpec({', '.join(repr(s) for s in self._value_specs)})"

    def _fit_value(self, value: Any, fit: Callable[[Any, Any], Any]) -> PerReplica:
        """``tf.function(input_signature=[dist_dataset.element_spec])``: check that ``value``
        is a ``PerReplica`` with one component per spec, each fitted by ``fit(component,
        spec)``; returns the fitted ``PerReplica``.

        Raises:
            InputSignatureError: not a ``PerReplica``, or another number of components.
        """
        if not isinstance(value, PerReplica):
            raise InputSignatureError(
                f"Python inputs incompatible with input_signature: {self!r} expects a "
                f"PerReplica value (an element of the distributed dataset), got "
                f"{type(value).__name__}."
            )
        if len(value.values) != len(self._value_specs):
            raise InputSignatureError(
                f"Python inputs incompatible with input_signature: {self!r} has "
                f"{len(self._value_specs)} replicas, the value {len(value.values)}."
            )
        return PerReplica(
            [fit(v, spec) for v, spec in zip(value.values, self._value_specs, strict=True)]
        )


def pack_per_replica(values: list, always_wrap: bool) -> Any:
    """One structure whose leaves are ``PerReplica`` of the replicas' leaves.

    Unlike ``values.regroup`` every leaf is wrapped, even one that is the same object on
    every replica (``value_fn`` returning ``ctx.num_replicas_in_sync`` gives ``(2, 2)``, as
    TF). With ``always_wrap=False`` and one replica, the structure itself is returned.

    Raises:
        ValueError: the replicas' structures differ.
    """
    if len(values) == 1 and not always_wrap:
        return values[0]
    first = values[0]
    for r, other in enumerate(values[1:], start=1):
        try:
            nest.assert_same_structure(first, other)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Replica 0 and replica {r} produced different structures ({exc}); every "
                "replica's value must have the same structure."
            ) from None
    flats = [nest.flatten(v) for v in values]
    leaves = [PerReplica(parts) for parts in zip(*flats, strict=True)]
    return nest.pack_sequence_as(first, leaves)


class DistributedIterator(Trackable):
    """Steps of a distributed dataset (``tf.distribute.DistributedIterator``).

    Thread-safe: concurrent ``get_next`` calls each receive a distinct step, in order.
    Trackable: ``tf.train.Checkpoint(iterator=it)`` saves how many steps it has given and
    restores the next step exactly (``simdist.data.iterator_state``).
    """

    def __init__(self, pull: Callable[[], list], owner) -> None:
        self._pull = pull  # () -> one element (NumPy) or None per local replica
        self._owner = owner
        self._lock = threading.Lock()
        self._position = Position(owner._pipelines(), self._kind())

    def _kind(self) -> str:
        return f"DistributedIterator/{len(self._owner._devices)} replicas"

    # --- the trackable protocol: the input position (simdist.data.iterator_state) --------
    def _serialize_to_tensors(self) -> dict:
        with self._lock:
            return {ITERATOR_STATE: self._position.state()}

    def _validate_restore(self, tensors: dict) -> None:
        self._position.check(tensors[ITERATOR_STATE])

    def _restore_from_tensors(self, tensors: dict) -> None:
        with self._lock:
            position = Position(self._owner._pipelines(), self._kind())
            document = position.check(tensors[ITERATOR_STATE])
            pull = self._owner._make_pull()
            position.replay(document, pull)
            self._pull, self._position = pull, position

    @property
    def element_spec(self) -> Any:
        """The spec of one step (``PerReplicaSpec`` leaves with several replicas)."""
        return self._owner.element_spec

    def __iter__(self) -> DistributedIterator:
        return self

    def __next__(self) -> Any:
        try:
            return self.get_next()
        except errors.OutOfRangeError:
            raise StopIteration from None

    def next(self) -> Any:
        return self.__next__()

    def get_next(self, name: str | None = None) -> Any:
        """The next step: one batch per replica.

        Raises:
            OutOfRangeError: no replica has data left ("End of sequence").
            ValueError: called inside a replica function.
        """
        if state.replica_context is not None:
            raise ValueError(
                "next(iterator) should be called from outside of replica_fn. e.g. "
                "strategy.run(replica_fn, args=(next(iterator),))"
            )
        step = self._next_step(self._owner._partial_batches)
        if step is None:
            raise errors.OutOfRangeError("End of sequence")
        return step

    def get_next_as_optional(self) -> Optional:
        """The next step wrapped in an ``Optional``, empty at the end."""
        step = self._next_step(self._owner._cardinality != INFINITE)
        return Optional(step, step is not None)

    def _next_step(self, partial: bool) -> Any:
        with self._lock:
            local = self._position.pull(self._pull)
        owner = self._owner
        count = sum(v is not None for v in local)
        total = owner._has_value_reducer(count) if owner._has_value_reducer else count
        if total == 0 or (not partial and count < len(local)):
            return None
        per_replica = []
        for value, device in zip(local, owner._value_devices, strict=True):
            element = rebatch.empty_element(owner._replica_spec) if value is None else value
            per_replica.append(structure.to_tensors(element, device))
        return pack_per_replica(per_replica, owner._always_wrap)

    def __repr__(self) -> str:
        return f"<DistributedIterator element_spec={self.element_spec}>"


def round_robin(streams: list[Iterator], num_replicas: int) -> Callable[[], list]:
    """Pull one step: with one stream per worker, consecutive elements go to replicas in
    order (the first replica that finds the stream ended ends the worker's step); with one
    stream per replica, each replica reads its own."""

    def pull() -> list:
        if len(streams) > 1:
            return [next(s, None) for s in streams]
        out: list = []
        for _ in range(num_replicas):
            ended = bool(out) and out[-1] is None
            out.append(None if ended else next(streams[0], None))
        return out

    return pull
