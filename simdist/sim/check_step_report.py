"""Compare the replicated and the one-replica run of a step check, per variable and step.

The likely cause of a difference is named by :mod:`simdist.sim.check_step_diagnose`.

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

from simdist.sim.check_step_diagnose import Diagnosis, diagnose, rel

__all__ = ["Diagnosis", "VariableDiff", "StepCheckReport", "compare", "tolerance"]


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


def _factor(a: np.ndarray, b: np.ndarray) -> float:
    denom = float(np.vdot(b, b))
    return float(np.vdot(a, b)) / denom if denom else 1.0


def tolerance(global_batch: int, shapes, dtype) -> float:
    """``4 * eps(dtype) * L`` (see the module docstring)."""
    eps = float(np.finfo(dtype if np.dtype(dtype).kind == "f" else np.float32).eps)
    longest = max((s[0] for s in shapes if len(s)), default=1)
    return 4 * eps * max(16, global_batch + longest)


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
            grad_rel, weight_rel = rel(g_n, g_1), rel(w_n, w_1)
            variables.append(
                VariableDiff(k, name, grad_rel, weight_rel, f, rel(g_n, f * g_1) <= 1e-3)
            )
        for name, value in rep.metrics.items():
            other = one.metrics.get(name)
            if other is not None and rel(np.array(value), np.array(other)) > 1e-4:
                metrics.append((k, name, value, other))
    for v in variables:
        max_rel = max(max_rel, v.grad_rel, v.weight_rel)
    for _, rep, one in losses:
        max_rel = max(max_rel, rel(np.array(rep), np.array(one)))
    tol = tol or tolerance(1, [], np.float32)
    diagnoses = diagnose(
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
