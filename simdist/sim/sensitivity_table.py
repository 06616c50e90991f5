"""The text tables of a reduction-sensitivity report (what ``simdist sensitivity`` prints)."""

from __future__ import annotations

__all__ = ["format_report"]


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.3g}"


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return [line(header), *(line(r) for r in rows)]


def format_report(report) -> str:
    """The report (a :class:`~simdist.sim.sensitivity.SensitivityReport`) as text."""
    first = report.replays[0]
    workers = f"{first.num_workers} worker{'s' if first.num_workers != 1 else ''}"
    lines = [
        f"Reduction-order sensitivity of {report.target}: {first.strategy}, "
        f"{first.num_replicas} replicas ({workers}), {report.steps} training steps, "
        f"{len(report.replays)} all-reduce algorithms",
        "",
        f"Loss curves against {report.reference!r} (diverges: |loss - ref| > "
        f"{report.atol:g} + {report.rtol:g} * |ref| at some step)",
    ]
    rows = []
    for check in report.checks:
        weights = sum(w.size for w in report.replays[0].weights)
        rows.append(
            [
                check.algorithm,
                "-" if check.final_loss is None else f"{check.final_loss:.9g}",
                _num(check.max_abs),
                _num(check.max_rel),
                "no" if check.diverged_at is None else f"at step {check.diverged_at}",
                f"{check.weights_differing:,}/{weights:,}",
                f"{check.weights_max_ulps:,}",
            ]
        )
    header = [
        "algorithm",
        "final loss",
        "max |dloss|",
        "max rel",
        "diverges",
        "weights != ref",
        "max ulps",
    ]
    lines += _table(header, rows, {1, 2, 3, 5, 6})
    lines += [
        "",
        f"Final weights: spread across the {len(report.replays)} algorithms "
        "(max - min of each element)",
    ]
    rows = []
    for var in report.variables:
        s = var.spread
        rows.append(
            [
                var.name,
                str(var.shape),
                _num(s.max_abs),
                _num(s.max_rel),
                f"{s.max_ulps:,}" if s.max_ulps >= 0 else "nan",
                f"{s.differing:,}/{s.size:,}",
            ]
        )
    header = ["variable", "shape", "max abs", "max rel", "max ulps", "elements differing"]
    lines += _table(header, rows, {2, 3, 4, 5})
    if any(not v.spread.finite for v in report.variables):
        lines.append("Some weights are inf or NaN: a run blew up; ulps count NaN-free elements.")
    lines.append("")
    for group in report.identical:
        lines.append(
            f"Bit-identical runs: {' = '.join(group)} (the same order of additions for this "
            "replica count, or values every order adds exactly; docs/reduction-sensitivity.md)"
        )
    lines.append(_verdict(report))
    return "\n".join(lines)


def _verdict(report) -> str:
    worst = max(report.variables, key=lambda v: v.spread.max_abs, default=None)
    if report.diverged:
        first = min(c.diverged_at for c in report.checks if c.diverged_at is not None)
        return (
            f"Verdict: the loss curve of {', '.join(report.diverged)} left the tolerance "
            f"(first at step {first} of {report.steps}): rounding differences of the order of "
            "additions have grown into a different trajectory. Compare such runs "
            "statistically or with a looser tolerance; for bit-for-bit comparisons across "
            "replica counts and topologies use the exact sum."
        )
    if worst is None or worst.spread.differing == 0:
        return (
            f"Verdict: every algorithm gave the same bits for {report.steps} steps: the "
            "reduction order does not reach this training's numbers."
        )
    return (
        f"Verdict: no loss curve left the tolerance in {report.steps} steps; the weights "
        f"moved by at most {worst.spread.max_abs:.3g} ({worst.name}): rounding-level "
        "differences, expected to grow with more steps (compare runs with a tolerance, "
        "not bit for bit)."
    )
