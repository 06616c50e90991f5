"""Distributed values: ``PerReplica`` (one value per replica) and ``Mirrored`` (one value, copied).

Plain containers, as STYLE asks: ``.values`` holds the components in replica order, and they
are never operator proxies. In a replica context, ``strategy.run`` unwraps them to the
running replica's component; ``experimental_local_results`` returns ``.values``.

>>> import simdist as tf
>>> PerReplica((tf.constant(1), tf.constant(2)))
PerReplica:{
  0: <tf.Tensor: shape=(), dtype=int32, numpy=1>,
  1: <tf.Tensor: shape=(), dtype=int32, numpy=2>
}
"""

from __future__ import annotations

from simdist.core import nest

__all__ = ["DistributedValues", "PerReplica", "Mirrored", "regroup", "select_replica"]


class DistributedValues:
    """Base of values that hold one component per replica (``tf.distribute.DistributedValues``)."""

    _type_name = "DistributedValues"

    def __init__(self, values) -> None:
        self._values = tuple(values)
        if not self._values:
            raise ValueError(f"{self._type_name} needs at least one component.")

    @property
    def values(self) -> tuple:
        return self._values

    def _component(self, replica_id: int):
        return self._values[replica_id]

    def _trace_components(self) -> tuple[str, tuple]:
        """How ``tf.function`` keys a trace on this value: its type and its components."""
        return self._type_name, self._values

    def __len__(self) -> int:  # number of components, not a tensor length
        return len(self._values)

    def __repr__(self) -> str:
        body = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
        return f"{self._type_name}:{{\n{body}\n}}"

    __str__ = __repr__


class PerReplica(DistributedValues):
    """One (possibly different) value per replica: what ``strategy.run`` returns."""

    _type_name = "PerReplica"


class Mirrored(DistributedValues):
    """One value, held identically by every replica (the result of an all-reduce)."""

    _type_name = "Mirrored"


def regroup(per_replica_outputs: list, wrap=PerReplica):
    """Turn N structures (one per replica) into one structure of N-component values.

    Leaves that are the same object on every replica (a variable all replicas returned)
    are kept as that one object; other leaves become ``wrap(values)``.

    Raises:
        ValueError: the replicas returned different structures.
    """
    first = per_replica_outputs[0]
    for r, other in enumerate(per_replica_outputs[1:], start=1):
        try:
            nest.assert_same_structure(first, other)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Replica 0 and replica {r} returned different structures from the function "
                f"passed to strategy.run ({exc}); every replica must return the same structure."
            ) from None
    flats = [nest.flatten(o) for o in per_replica_outputs]
    leaves = []
    for components in zip(*flats, strict=True):
        if all(c is components[0] for c in components):
            leaves.append(components[0])
        else:
            leaves.append(wrap(components))
    return nest.pack_sequence_as(first, leaves)


def select_replica(replica_id: int, structure):
    """The structure with every distributed value replaced by its ``replica_id`` component."""

    def pick(x):
        if isinstance(x, DistributedValues):
            return x._component(replica_id)
        return x

    return nest.map_structure(pick, structure)
