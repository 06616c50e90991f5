"""The gradient lists of apply_gradients: missing gradients, components, per-replica clipping."""

from __future__ import annotations

import warnings

from simdist.core.tensor import make_tensor

__all__ = ["drop_missing", "first_component", "clip_per_replica"]


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
