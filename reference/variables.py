"""Distributed variable rules: mirrored (ON_WRITE) updates and sync-on-read (ON_READ) values.

A distributed variable is given as `copies`, the list of its per-replica component values
in replica order. Each function returns the value read, or the new list of copies.
`kind` is one of "assign", "assign_add", "assign_sub".

TF sources read for these rules: tensorflow/python/distribute/values.py
(`_on_write_update_replica`, `SyncOnReadVariable` / `OnReadPolicy`), values_util.py
(`apply_aggregation`, `on_read_assign_cross_replica`, `on_read_assign_add_cross_replica`),
reduce_util.py (`ReduceOp.from_variable_aggregation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from simdist_reference.reduce import reduce

AGGREGATIONS = ("NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA")
UPDATE_KINDS = ("assign", "assign_add", "assign_sub")


def aggregation_name(aggregation: Any) -> str:
    """Canonical name of a `tf.VariableAggregation` given as a string or enum-like.

    Args:
      aggregation: "NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA" (any case) or `.name`-bearing.

    Returns:
      The upper-case name.

    Raises:
      ValueError: an unknown aggregation.
    """
    name = aggregation.name if hasattr(aggregation, "name") else aggregation
    if not isinstance(name, str) or name.upper() not in AGGREGATIONS:
        raise ValueError(
            f"{aggregation!r} is not a VariableAggregation; use one of {', '.join(AGGREGATIONS)}"
        )
    return name.upper()


def reduce_op_from_aggregation(aggregation: Any) -> str:
    """`ReduceOp.from_variable_aggregation`: SUM -> SUM, MEAN -> MEAN, others refused.

    TF rule (reduce_util.py): only SUM and MEAN aggregations map to a reduce op; NONE and
    ONLY_FIRST_REPLICA raise ValueError.

    Args:
      aggregation: the variable aggregation.

    Returns:
      "SUM" or "MEAN".

    Raises:
      ValueError: NONE or ONLY_FIRST_REPLICA.
    """
    name = aggregation_name(aggregation)
    if name not in ("SUM", "MEAN"):
        raise ValueError(
            f"Could not convert from `tf.VariableAggregation` VariableAggregation.{name} to "
            "`tf.distribute.ReduceOp` type"
        )
    return name


def _check_kind(kind: str) -> None:
    if kind not in UPDATE_KINDS:
        raise ValueError(f"kind must be one of {UPDATE_KINDS}, got {kind!r}")


def _as_copies(copies: Sequence[Any]) -> list[np.ndarray]:
    if not isinstance(copies, (list, tuple)) or len(copies) == 0:
        raise ValueError("copies is the non-empty list of a variable's per-replica values")
    return [np.asarray(c) for c in copies]


def _apply(kind: str, old: np.ndarray, value: np.ndarray) -> np.ndarray:
    """One component's update, kept in the variable's dtype (float64 for floats)."""
    dtype = np.float64 if old.dtype.kind == "f" else old.dtype
    old = old.astype(dtype)
    if kind == "assign":
        new = np.broadcast_to(np.asarray(value), old.shape)
    elif kind == "assign_add":
        new = old + value
    else:
        new = old - value
    if new.shape != old.shape:
        raise ValueError(
            f"cannot {kind} a value of shape {np.shape(value)} to a variable of shape {old.shape}"
        )
    return np.array(new, dtype=dtype)


def mirrored_update_replica_context(
    copies: Sequence[Any],
    per_replica_values: Sequence[Any],
    aggregation: Any,
    kind: str = "assign",
    strict_none: bool = True,
) -> list[np.ndarray]:
    """A MirroredVariable updated inside `strategy.run`: what every copy holds afterwards.

    TF rules (values.py `_on_write_update_replica`, values_util.py `apply_aggregation`):
    the per-replica values passed to assign / assign_add / assign_sub are first aggregated
    across replicas, then the same update with the aggregated value is applied to every
    copy:
    * SUM: the values are summed (for assign_add/assign_sub these are the deltas, so each
      copy moves by the sum of all deltas);
    * MEAN: their mean; refused for a non-floating variable ("Cannot update non-float
      variables with tf.VariableAggregation.MEAN aggregation in replica context...").
      TF refuses it whenever the value is a tensor (no-merge-call path) or differs
      between replicas (merge-call path); the reference always refuses it;
    * ONLY_FIRST_REPLICA: replica 0's value is broadcast;
    * NONE: TF applies each replica's own value to its own copy only, so the copies
      silently diverge when the values differ (TF 2.x). With `strict_none=True` (simdist's
      deliberate, loud choice) differing values raise ValueError; equal values update
      every copy. `strict_none=False` states TF's diverging behaviour.

    Args:
      copies: the variable's per-replica values before the update, replica order.
      per_replica_values: the value each replica passed, replica order.
      aggregation: the variable's aggregation.
      kind: "assign", "assign_add" or "assign_sub".
      strict_none: refuse differing values under NONE (simdist) instead of diverging (TF).

    Returns:
      The copies after the update.

    Raises:
      ValueError: NONE with differing values (strict), MEAN on an integer variable, a
        replica count mismatch, or incompatible shapes.
    """
    _check_kind(kind)
    old = _as_copies(copies)
    values = [np.asarray(v) for v in per_replica_values]
    if len(values) != len(old):
        raise ValueError(
            f"{len(values)} per-replica values for a variable with "
            f"{len(old)} copies; pass one value per replica"
        )
    name = aggregation_name(aggregation)
    if name == "NONE":
        same = all(np.array_equal(v, values[0]) for v in values)
        if strict_none and not same:
            raise ValueError(
                f"{kind} of different per-replica values to a mirrored variable with "
                "aggregation NONE would make its copies diverge; create the variable "
                "with aggregation SUM, MEAN or ONLY_FIRST_REPLICA, or update it in "
                "cross-replica context"
            )
        return [_apply(kind, c, v) for c, v in zip(old, values, strict=True)]
    if name == "MEAN" and old[0].dtype.kind not in "fc":
        raise ValueError(
            "Cannot update non-float variables with tf.VariableAggregation.MEAN "
            "aggregation in replica context. Either change the variable dtype to float "
            "or update it in cross-replica context."
        )
    if name == "ONLY_FIRST_REPLICA":
        aggregated = values[0]
    else:
        aggregated = reduce(name, values, axis=None)
    return [_apply(kind, c, aggregated) for c in old]


def mirrored_update_cross_replica(
    copies: Sequence[Any], value: Any, kind: str = "assign"
) -> list[np.ndarray]:
    """A MirroredVariable updated in cross-replica context: every copy gets the same update.

    TF rule (values.py `_update_cross_replica` -> `extended.update`): the one value is
    applied to every component, whatever the aggregation.

    Args:
      copies: the variable's per-replica values before the update.
      value: the value (or delta).
      kind: "assign", "assign_add" or "assign_sub".

    Returns:
      The copies after the update.
    """
    _check_kind(kind)
    return [_apply(kind, c, np.asarray(value)) for c in _as_copies(copies)]


def sync_on_read_value(copies: Sequence[Any], aggregation: Any) -> np.ndarray:
    """Reading an ON_READ variable in cross-replica context.

    TF rule (values.py `OnReadPolicy.value` / `_get_cross_replica`): ONLY_FIRST_REPLICA
    reads replica 0's copy; SUM and MEAN reduce the copies across replicas
    (`strategy.reduce(op, var, axis=None)`); NONE cannot be converted to a reduce op and
    raises ValueError. In replica context a read returns the local copy (see
    `sync_on_read_local`).

    Args:
      copies: the per-replica values.
      aggregation: the variable's aggregation.

    Returns:
      The value read.

    Raises:
      ValueError: aggregation NONE.
    """
    old = _as_copies(copies)
    name = aggregation_name(aggregation)
    if name == "ONLY_FIRST_REPLICA":
        return old[0].copy()
    return reduce(reduce_op_from_aggregation(name), old, axis=None)


def sync_on_read_local(copies: Sequence[Any], replica_id: int) -> np.ndarray:
    """Reading an ON_READ variable in replica context: the replica's own copy, no sync.

    Args:
      copies: the per-replica values.
      replica_id: the reading replica.

    Returns:
      copies[replica_id].
    """
    return _as_copies(copies)[replica_id].copy()


def sync_on_read_assign_cross_replica(
    copies: Sequence[Any], value: Any, aggregation: Any, kind: str = "assign"
) -> list[np.ndarray]:
    """Assigning to an ON_READ variable in cross-replica context.

    TF rules (values_util.py `on_read_assign_cross_replica` and friends):
    * assign with SUM: every copy gets value / num_replicas, cast to the variable's dtype
      (so that the SUM read back gives the value); integer variables truncate toward zero
      as TF's cast does;
    * assign with any other aggregation (MEAN, ONLY_FIRST_REPLICA, NONE): every copy gets
      the value;
    * assign_add / assign_sub with SUM: refused with ValueError ("SyncOnReadVariable does
      not support `assign_add` in cross-replica context when aggregation is set to
      `tf.VariableAggregation.SUM`.");
    * assign_add / assign_sub otherwise: every copy moves by the value.

    Args:
      copies: the per-replica values before the update.
      value: the value (or delta).
      aggregation: the variable's aggregation.
      kind: "assign", "assign_add" or "assign_sub".

    Returns:
      The copies after the update.

    Raises:
      ValueError: assign_add/assign_sub with SUM aggregation.
    """
    _check_kind(kind)
    old = _as_copies(copies)
    name = aggregation_name(aggregation)
    value = np.asarray(value)
    if name == "SUM" and kind != "assign":
        raise ValueError(
            f"SyncOnReadVariable does not support `{kind}` in cross-replica context when "
            "aggregation is set to `tf.VariableAggregation.SUM`."
        )
    if name == "SUM":
        share = value.astype(np.float64) / len(old)
        if old[0].dtype.kind in "iu":
            share = np.trunc(share).astype(old[0].dtype)
        value = share
    return [_apply(kind, c, value) for c in old]


def sync_on_read_update_local(
    copies: Sequence[Any], replica_id: int, value: Any, kind: str = "assign"
) -> list[np.ndarray]:
    """Updating an ON_READ variable in replica context: only the replica's own copy changes.

    Args:
      copies: the per-replica values before the update.
      replica_id: the updating replica.
      value: the value (or delta).
      kind: "assign", "assign_add" or "assign_sub".

    Returns:
      The copies after the update.
    """
    _check_kind(kind)
    old = _as_copies(copies)
    new = [c.copy() for c in old]
    new[replica_id] = _apply(kind, old[replica_id], np.asarray(value))
    return new
