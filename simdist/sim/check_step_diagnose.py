"""Name the likely cause of an N-vs-1 difference from the two runs' records and notes.

Each cause has a signature in the comparison (gradients uniformly xN, a metric that alone
differs, identical inputs on several workers) and evidence the hooks collected in the
replicated run (a ``compute_average_loss`` without ``global_batch_size``, a
``BatchNormalization`` called in the step, ``model.losses`` read without
``scale_regularization_loss``, a random op whose seed depends on the replica); a cause is
named only when its evidence is there, and the causes are ranked by how specific it is.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["CAUSES", "Diagnosis", "diagnose", "rel"]

CAUSES = {
    "loss_scaling": "loss scaled by the wrong count",
    "average_loss_batch": "compute_average_loss without global_batch_size",
    "metric_one_replica": "metric updated outside strategy.run",
    "batch_norm": "BatchNormalization statistics per replica",
    "regularization": "regularization loss not scaled",
    "random_per_replica": "random op seeded per replica",
    "dataset_not_sharded": "dataset not sharded",
    "shuffle_differs": "shuffle differs per worker",
    "initial_weights": "the two runs started from different weights",
}


@dataclasses.dataclass(frozen=True)
class Diagnosis:
    """A likely cause: its key (:data:`CAUSES`), why, and the user's line to change."""

    cause: str
    score: int
    reason: str
    site: str | None = None
    code: str | None = None

    @property
    def title(self) -> str:
        return CAUSES[self.cause]


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """Normwise relative difference ``max|a - b| / max|b|`` (0 when both are zero)."""
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    if scale == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / scale


def _notes(steps, kind):
    return [n for step in steps for n in step.notes if n.kind == kind]


def _last_site(notes, direct=False):
    if direct and notes:
        least = min(n.depth for n in notes)
        notes = [n for n in notes if n.depth == least]
    for n in reversed(notes):
        if n.site:
            return n.site, n.code
    return None, None


def diagnose(rep_steps, one_steps, n, variables, metrics, tol, max_rel, input_found, setup):
    flat = [s for workers in rep_steps for s in workers]
    out: list[Diagnosis] = []
    if rep_steps and one_steps:
        start_n, start_1 = rep_steps[0][0].before, one_steps[0].before
        moved = [
            name
            for name, a, b in zip(rep_steps[0][0].names, start_n, start_1, strict=False)
            if a.shape != b.shape or rel(a, b) > tol
        ]
        if moved:
            out.append(
                Diagnosis(
                    "initial_weights",
                    11,
                    f"variables {', '.join(moved[:4])} had different values before the first "
                    "step in the two runs: the model's initialization depends on the replica "
                    "count or on something outside simdist's random state (e.g. NumPy's own "
                    "generator unseeded); initialize from a fixed seed",
                )
            )
    differs = max_rel > tol
    for f in input_found:
        if f.kind == "same_examples":
            site, code = _last_site([x for x in setup if x.kind == "distribute_dataset"])
            out.append(Diagnosis("dataset_not_sharded", 10, f.message, site, code))
        elif f.kind == "shuffle_differs":
            out.append(Diagnosis("shuffle_differs", 9, f.message))
    bad = [v for v in variables if max(v.grad_rel, v.weight_rel) > tol]
    bad = [v for v in bad if v.step == bad[0].step]  # the first step that differs
    if bad and all(v.uniform for v in bad):
        factors = sorted({round(v.factor, 3) for v in bad})
        for target, text in ((n, f"x{n}"), (1 / n, f"/{n}")):
            if all(abs(f - target) <= 1e-2 * target for f in factors):
                site, code = _last_site(
                    [
                        x
                        for x in _notes(flat, "compute_average_loss") + _notes(flat, "reduce")
                        if x.replica is not None
                    ],
                    direct=True,
                )
                reason = (
                    f"every gradient is {text} the one-replica gradient: the per-replica loss "
                    + (
                        "is averaged over the replica's own batch (or divided by the "
                        "per-replica batch) and the replicas' gradients are then summed; "
                        "divide the summed per-example loss by the GLOBAL batch "
                        "(tf.nn.compute_average_loss(per_example_loss, global_batch_size=...))"
                        if target > 1
                        else "is divided by the number of replicas once too often (the "
                        "global batch already counts them); drop the extra division"
                    )
                )
                out.append(Diagnosis("loss_scaling", 8, reason, site, code))
    if differs:
        cal = [x for x in _notes(flat, "compute_average_loss") if x.replica is not None]
        default = [x for x in cal if not x.details["given"]]
        divisors = {x.details["divisor"] for x in cal}
        uneven = any(len({len(x[0]) for x in s.inputs if x and x[0] is not None}) > 1 for s in flat)
        if default and (len(divisors) > 1 or uneven):
            site, code = _last_site(default)
            out.append(
                Diagnosis(
                    "average_loss_batch",
                    7,
                    "compute_average_loss was called without global_batch_size while the "
                    "replicas' batches differ in size (a partial last batch): each replica "
                    f"divided by its own batch x {n} ({', '.join(map(str, sorted(divisors)))}) "
                    "instead of the global batch; pass global_batch_size=GLOBAL_BATCH_SIZE",
                    site,
                    code,
                )
            )
        regs = [x for x in _notes(flat, "regularization_losses") if x.replica is not None]
        scaled = _notes(flat, "scale_regularization_loss")
        if regs and not scaled:
            site, code = _last_site(regs)
            out.append(
                Diagnosis(
                    "regularization",
                    6,
                    f"the model's regularization losses (model.losses) are added to every "
                    f"replica's loss unscaled, so the summed gradients count them {n} times; wrap "
                    "them: tf.nn.scale_regularization_loss(tf.add_n(model.losses))",
                    site,
                    code,
                )
            )
        bns = [x for x in _notes(flat, "layer") if x.details["cls"] == "BatchNormalization"]
        if bns:
            site, code = _last_site(bns)
            out.append(
                Diagnosis(
                    "batch_norm",
                    5,
                    f"layer {bns[0].details['name']!r} (BatchNormalization) normalizes each "
                    f"replica's B/{n} examples with that replica's own mean and variance; the "
                    "one-replica run uses the whole batch's. Use "
                    "tf.keras.layers.experimental.SyncBatchNormalization if you meant one set of "
                    "statistics (this only differs when the replicas' batch statistics differ)",
                    site,
                    code,
                )
            )
        randoms = [x for x in _notes(flat, "random") if x.replica is not None]
        if randoms:
            seeds = {}
            for x in randoms:
                seeds.setdefault(x.site, {}).setdefault(x.replica, set()).add(
                    repr(x.details["seed"])
                )
            per_replica = [
                s for s, by in seeds.items() if len({frozenset(v) for v in by.values()}) > 1
            ]
            site, code = _last_site([x for x in randoms if x.site in per_replica] or randoms)
            how = (
                "its seed depends on the replica"
                if per_replica
                else "each replica draws from its own random stream"
            )
            out.append(
                Diagnosis(
                    "random_per_replica",
                    6 if per_replica else 4,
                    f"a random op inside the replica step draws different values on each "
                    f"replica ({how}); the one-replica run draws one set for the whole batch. "
                    "Use one seed for all replicas (e.g. stateless ops with a seed that does not "
                    "involve replica_id_in_sync_group) if the values should be identical",
                    site,
                    code,
                )
            )
    if metrics and not bad:
        updates = [x for x in _notes(flat, "metric")]
        outside = [x for x in updates if x.replica is None]
        site, code = _last_site(outside or updates)
        name = metrics[0][1]
        where = (
            "is updated outside strategy.run, with one replica's value"
            if outside
            else "sees only some replicas' values"
        )
        out.append(
            Diagnosis(
                "metric_one_replica",
                5,
                f"loss, gradients and weights agree, but metric {name!r} differs: it {where}. "
                "Update metrics inside the replica function (they aggregate over replicas), or "
                "from strategy.reduce(...) of all replicas' values",
                site,
                code,
            )
        )
    out.sort(key=lambda d: -d.score)
    return out
