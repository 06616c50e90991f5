"""The gradient lists of apply_gradients: missing gradients, components, per-replica clipping."""

from __future__ import annotations

import warnings

from simdist.core.tensor import make_tensor

__all__ = [
    "MissingGradientOnReplica",
    "check_same_on_every_replica",
    "drop_missing",
    "first_component",
    "clip_per_replica",
]


class MissingGradientOnReplica(ValueError, AssertionError):
    """A variable has a gradient on some replicas and ``None`` on others.

    TensorFlow (eager) fails here with a bare ``AssertionError`` from ``regroup`` ("Values to
    regroup had different lengths"); simdist's error is also an ``AssertionError``, so code
    written against TF catches it, and a ``ValueError``, which is what it is: bad input.
    """


def check_same_on_every_replica(pairs: list) -> None:
    """Raise :class:`MissingGradientOnReplica` for the first variable whose per-replica
    gradient is ``None`` on some replicas only, naming the variable and those replicas."""
    from simdist.distribute.values import PerReplica

    for g, v in pairs:
        if not isinstance(g, PerReplica):
            continue
        missing = [r for r, c in enumerate(g.values) if c is None]
        if not missing:
            continue
        present = [r for r, c in enumerate(g.values) if c is not None]
        raise MissingGradientOnReplica(
            f"The gradient of variable {v.name!r} is None on {_replicas(missing)} but not on "
            f"{_replicas(present)} (replica_id_in_sync_group): the loss there does not depend "
            "on it, e.g. a branch on the replica id skips it. Every replica must give a "
            "gradient for the same variables: use the variable on every replica's path, or "
            "replace a None gradient by tf.zeros_like(variable) before apply_gradients."
        )


def _replicas(ids: list) -> str:
    return f"replica {ids[0]}" if len(ids) == 1 else f"replicas {', '.join(map(str, ids))}"


def drop_missing(pairs: list) -> list:
    """The pairs that have a gradient; warn about the others (none at all: ValueError)."""
    missing = [v for g, v in pairs if g is None]
    kept = [(g, v) for g, v in pairs if g is not None]
    if not kept:
        raise ValueError(
            f"No gradients provided for any variable: {[v.name for _, v in pairs]}. "
            "Check that the loss depends on the variables and was computed under the "
            "GradientTape."
        )
    if missing:
        warnings.warn(
            f"Gradients do not exist for variables {[v.name for v in missing]} when "
            "minimizing the loss; they are left unchanged.",
            stacklevel=3,
        )
    return kept


def first_component(value):
    values = getattr(value, "values", None)
    return values[0] if isinstance(values, tuple) else value


def clip_per_replica(grads: list, strategy, clip) -> list:
    """Per-replica gradients with each replica's set clipped together by ``clip`` (a list of
    arrays -> a list of arrays); unchanged when ``clip`` is ``None``."""
    if clip is None:
        return grads
    from simdist.distribute.values import PerReplica

    count = strategy.num_replicas_in_sync

    def component(g, r):
        values = getattr(g, "values", None)
        return values[r] if isinstance(values, tuple) else g

    per_replica = [clip([component(g, r) for g in grads]) for r in range(count)]
    return [
        PerReplica([make_tensor(per_replica[r][i]) for r in range(count)])
        for i in range(len(grads))
    ]
