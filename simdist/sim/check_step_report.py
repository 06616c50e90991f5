"""Compare the replicated and the one-replica run of a step check; name the likely cause.

Each step starts from the weights the replicated run had (the one-replica run is fed the
same global batch; step 0 starts from the same initial weights). Per variable the report
gives the normwise relative difference ``max|g_N - g_1| / max|g_1|`` of the aggregated
gradient and of the weights after the update, and the best factor
``f = <g_N, g_1> / <g_1, g_1>``: a uniform ``f`` of N or 1/N is the signature of a loss
scaled by the wrong count.

**Tolerance.** The two runs add the same terms in different orders (N partial sums then an
all-reduce, against one sum), so they may differ by rounding. The tolerance is
``4 * eps * L`` with ``eps`` the machine epsilon of the variables' dtype (float32:
1.19e-07) and ``L`` the reduction length: the global batch size plus the largest
variable's first dimension (the longest sums in the forward and backward pass), at least 16.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Diagnosis", "VariableDiff", "StepCheckReport", "compare"]

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
class VariableDiff:
    """One variable at one step: the differences of its aggregated gradient and of its
    weights after the update, and the gradient's factor."""

    step: int
    name: str
    grad_rel: float
    weight_rel: float
    factor: float  # g_N ~ factor * g_1
    uniform: bool  # g_N - factor * g_1 is within the tolerance


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


@dataclasses.dataclass(frozen=True)
class StepCheckReport:
    """The result of a step check (``str`` it). ``equivalent``: nothing differs beyond
    the tolerance and the input check found no problem."""

    num_replicas: int
    strategy: str
    steps: int
    tolerance: float
    max_rel: float
    losses: tuple  # (step, replicated, single)
    variables: tuple[VariableDiff, ...]
    metrics: tuple  # (step, name, replicated, single)
    diagnoses: tuple[Diagnosis, ...]
    input: tuple  # InputFinding

    @property
    def equivalent(self) -> bool:
        return not self.diagnoses and not self._differs()

    def _differs(self) -> bool:
        return self.max_rel > self.tolerance

    @property
    def cause(self) -> str | None:
        """The top-ranked cause's key, or None."""
        return self.diagnoses[0].cause if self.diagnoses else None

    def __str__(self) -> str:
        n = self.num_replicas
        head = f"check-step: {self.strategy}, {n} replicas x B/{n} against 1 replica x B, "
        lines = [head + f"{self.steps} step(s)"]
        for step, rep, one in self.losses:
            lines.append(f"  step {step} loss: {n} replicas {rep:.9g}, 1 replica {one:.9g}")
        if self.equivalent:
            lines.append(
                f"N-vs-1 equivalent within float rounding (max relative difference "
                f"{self.max_rel:.3g}, tolerance {self.tolerance:.3g} = 4 x eps x reduction "
                "length)"
            )
            lines += [f"input warning: {f.message}" for f in self.input]
            return "\n".join(lines)
        differing = [v for v in self.variables if max(v.grad_rel, v.weight_rel) > self.tolerance]
        if differing:
            names = {v.name for v in self.variables}
            lines.append(
                f"N-vs-1 DIFFERENT: {len({v.name for v in differing})} of {len(names)} "
                f"variables' gradients or weights differ beyond the tolerance "
                f"{self.tolerance:.3g} (max relative difference {self.max_rel:.3g})"
            )
        else:
            lines.append(
                "N-vs-1 NOT EQUIVALENT: gradients and weights agree within float rounding "
                f"(max relative difference {self.max_rel:.3g}), but:"
            )
        if differing:
            lines.append("  step  variable                        grad rel   weight rel  factor")
            for v in differing[:12]:
                factor = f"x{v.factor:.4g}" + ("" if v.uniform else " (not uniform)")
                lines.append(
                    f"  {v.step:>4}  {v.name[:30]:<30}  {v.grad_rel:>9.3g}  {v.weight_rel:>10.3g}"
                    f"  {factor}"
                )
        for step, name, rep, one in self.metrics:
            lines.append(
                f"  step {step} metric {name!r}: {n} replicas {rep:.9g}, 1 replica {one:.9g}"
            )
        for f in self.input:
            if not f.difference:  # problems are listed as causes below
                lines.append(f"input warning: {f.message}")
        for rank, d in enumerate(self.diagnoses, start=1):
            lines.append(f"likely cause {rank}: {d.title}: {d.reason}")
            if d.site:
                lines.append(f"    change: {d.site}" + (f"  `{d.code}`" if d.code else ""))
        if not self.diagnoses:
            lines.append("likely cause: none of the known ones was recognised")
        return "\n".join(lines)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    if scale == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / scale


def _factor(a: np.ndarray, b: np.ndarray) -> float:
    denom = float(np.vdot(b, b))
    return float(np.vdot(a, b)) / denom if denom else 1.0


def tolerance(global_batch: int, shapes, dtype) -> float:
    """``4 * eps(dtype) * L`` (see the module docstring)."""
    eps = float(np.finfo(dtype if np.dtype(dtype).kind == "f" else np.float32).eps)
    longest = max((s[0] for s in shapes if len(s)), default=1)
    return 4 * eps * max(16, global_batch + longest)


def _notes(steps, kind, replicated=True):
    return [n for step in steps for n in step.notes if n.kind == kind]


def _last_site(notes, direct=False):
    if direct and notes:
        least = min(n.depth for n in notes)
        notes = [n for n in notes if n.depth == least]
    for n in reversed(notes):
        if n.site:
            return n.site, n.code
    return None, None


def compare(
    rep_steps: list[list],
    one_steps: list,
    num_replicas: int,
    strategy: str,
    input_found: list,
    setup_notes=(),
) -> StepCheckReport:
    """Build the report. ``rep_steps[k]``: the replicated run's step ``k`` on every
    worker (worker order); ``one_steps[k]``: the one-replica run's step ``k``."""
    n = num_replicas
    count = min(len(rep_steps), len(one_steps))
    losses, variables, metrics = [], [], []
    tol = 0.0
    max_rel = 0.0
    for k in range(count):
        workers, one = rep_steps[k], one_steps[k]
        rep = workers[0]
        results = [r for w in workers for r in w.results]
        if results and all(results) and one.results and one.results[0]:
            values = [r[0] for r in results]
            same = all(v == values[0] for v in values)
            losses.append((k, values[0] if same else float(np.sum(values)), one.results[0][0]))
        batch = sum(
            len(x[0]) for w in workers for x in w.inputs if x and x[0] is not None and x[0].ndim
        )
        dtype = rep.grads[0].dtype if rep.grads else np.float32
        tol = max(tol, tolerance(batch, [g.shape for g in rep.grads], dtype))
        for i, name in enumerate(rep.names[: len(one.names)]):
            g_n, g_1 = rep.grads[i], one.grads[i]
            if g_n.shape != g_1.shape:
                continue
            w_n = rep.after[i] if i < len(rep.after) else g_n
            w_1 = one.after[i] if i < len(one.after) else g_1
            f = _factor(g_n, g_1)
            grad_rel, weight_rel = _rel(g_n, g_1), _rel(w_n, w_1)
            variables.append(
                VariableDiff(k, name, grad_rel, weight_rel, f, _rel(g_n, f * g_1) <= 1e-3)
            )
        for name, value in rep.metrics.items():
            other = one.metrics.get(name)
            if other is not None and _rel(np.array(value), np.array(other)) > 1e-4:
                metrics.append((k, name, value, other))
    for v in variables:
        max_rel = max(max_rel, v.grad_rel, v.weight_rel)
    for _, rep, one in losses:
        max_rel = max(max_rel, _rel(np.array(rep), np.array(one)))
    tol = tol or tolerance(1, [], np.float32)
    diagnoses = _diagnose(
        rep_steps[:count],
        one_steps[:count],
        n,
        variables,
        metrics,
        tol,
        max_rel,
        input_found,
        list(setup_notes),
    )
    return StepCheckReport(
        n,
        strategy,
        count,
        tol,
        max_rel,
        tuple(losses),
        tuple(variables),
        tuple(metrics),
        tuple(diagnoses),
        tuple(input_found),
    )


def _diagnose(rep_steps, one_steps, n, variables, metrics, tol, max_rel, input_found, setup):
    flat = [s for workers in rep_steps for s in workers]
    out: list[Diagnosis] = []
    if rep_steps and one_steps:
        start_n, start_1 = rep_steps[0][0].before, one_steps[0].before
        moved = [
            name
            for name, a, b in zip(rep_steps[0][0].names, start_n, start_1, strict=False)
            if a.shape != b.shape or _rel(a, b) > tol
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
