"""Reduction-order sensitivity: how much a training's numbers move with the all-reduce algorithm.

:func:`reduction_sensitivity` replays one program for K steps under each all-reduce
algorithm and under the exact sum (:mod:`simdist.sim.replay`), then reports:

* per trained variable, the **spread** of its final values across the algorithms
  (:func:`simdist.sim.float_spread.spread`: max abs, max relative, max ulps, elements that
  are not bit-identical);
* per algorithm, its loss curve against the **reference** run (``exact`` when it is among
  the algorithms, else the first) and whether it **diverges**: at some step ``k``,
  ``|loss(k) - ref(k)| > atol + rtol * |ref(k)|``;
* which algorithms gave bit-identical runs (the same order of additions, see the docs).

The table is :meth:`SensitivityReport.table`; a PNG of the loss curves is
:func:`simdist.sim.sensitivity_plot.plot_losses`; ``simdist sensitivity`` prints both.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence

import numpy as np

from simdist.collectives.forced import EXACT, FORCEABLE
from simdist.sim.float_spread import Spread, spread, ulp_distance
from simdist.sim.replay import Replay, replay

__all__ = [
    "DEFAULT_ALGORITHMS",
    "ALIASES",
    "SensitivityReport",
    "LossCheck",
    "VariableSpread",
    "resolve_algorithms",
    "compare",
    "reduction_sensitivity",
]

DEFAULT_ALGORITHMS = ("ring", "double_binary_tree", "recursive_doubling", "hierarchical", EXACT)
ALIASES = {"tree": "double_binary_tree"}
RTOL = 1e-4
ATOL = 1e-6


def resolve_algorithms(names: Sequence[str]) -> tuple[str, ...]:
    """Canonical names (``tree`` is ``double_binary_tree``), each once, in the given order.

    Raises:
        ValueError: an unknown name, or none (the message lists the choices).
    """
    out: list[str] = []
    for raw in names:
        name = ALIASES.get(raw.strip(), raw.strip())
        if name not in FORCEABLE:
            raise ValueError(
                f"unknown all-reduce algorithm {raw!r}; choose from {', '.join(FORCEABLE)} "
                f"(or 'tree' for double_binary_tree)"
            )
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError(f"no algorithm given; choose from {', '.join(FORCEABLE)}")
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class VariableSpread:
    """One trained variable's final values across the algorithms."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    spread: Spread


@dataclasses.dataclass(frozen=True)
class LossCheck:
    """One algorithm's loss curve and final weights against the reference run.

    Attributes:
        algorithm: the algorithm.
        final_loss: its loss at the last step (None: the step returned no loss).
        max_abs: the largest ``|loss(k) - ref(k)|`` over the steps.
        max_rel: the largest ``|loss(k) - ref(k)| / |ref(k)|``.
        diverged_at: the first step (1-based) beyond the tolerance, or None.
        weights_differing: trained weights not bit-identical to the reference's.
        weights_max_ulps: the largest ulp distance of a weight from the reference's.
    """

    algorithm: str
    final_loss: float | None
    max_abs: float
    max_rel: float
    diverged_at: int | None
    weights_differing: int
    weights_max_ulps: int


@dataclasses.dataclass(frozen=True)
class SensitivityReport:
    """What :func:`reduction_sensitivity` found (see the module docstring)."""

    target: str
    replays: tuple[Replay, ...]
    reference: str
    rtol: float
    atol: float
    variables: tuple[VariableSpread, ...]
    checks: tuple[LossCheck, ...]
    identical: tuple[tuple[str, ...], ...]  # groups of algorithms with bit-identical runs

    @property
    def algorithms(self) -> tuple[str, ...]:
        return tuple(r.algorithm for r in self.replays)

    @property
    def steps(self) -> int:
        return self.replays[0].steps

    @property
    def diverged(self) -> tuple[str, ...]:
        """The algorithms whose loss curve left the tolerance."""
        return tuple(c.algorithm for c in self.checks if c.diverged_at is not None)

    def table(self) -> str:
        """The report as text tables (what ``simdist sensitivity`` prints)."""
        from simdist.sim.sensitivity_table import format_report

        return format_report(self)

    def __str__(self) -> str:
        return self.table()


def _bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).reshape(-1).view(f"u{array.dtype.itemsize}")


def _loss_check(run: Replay, ref: Replay, rtol: float, atol: float) -> LossCheck:
    max_abs = max_rel = 0.0
    diverged_at = None
    for k, (mine, theirs) in enumerate(zip(run.losses, ref.losses, strict=True), start=1):
        if mine is None or theirs is None:
            continue
        gap = abs(mine - theirs)
        if not np.isfinite(gap):  # inf or NaN in a loss: equal blow-ups do not diverge
            same = mine == theirs or (np.isnan(mine) and np.isnan(theirs))
            gap = 0.0 if same else float("inf")
        max_abs = max(max_abs, gap)
        if theirs != 0:
            max_rel = max(max_rel, gap / abs(theirs))
        if diverged_at is None and gap > atol + rtol * abs(theirs):
            diverged_at = k
    differing, max_ulps = 0, 0
    for mine, theirs in zip(run.weights, ref.weights, strict=True):
        differing += int(np.count_nonzero(_bits(mine) != _bits(theirs)))
        clean = ~(np.isnan(mine) | np.isnan(theirs))
        if clean.any():
            max_ulps = max(max_ulps, int(ulp_distance(mine[clean], theirs[clean]).max()))
    return LossCheck(
        run.algorithm, run.losses[-1], max_abs, max_rel, diverged_at, differing, max_ulps
    )


def _same_bits(a: Replay, b: Replay) -> bool:
    if a.losses != b.losses:
        return False
    return all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        for x, y in zip(a.weights, b.weights, strict=True)
    )


def _groups(replays: Sequence[Replay]) -> tuple[tuple[str, ...], ...]:
    groups: list[list[Replay]] = []
    for run in replays:
        for group in groups:
            if _same_bits(group[0], run):
                group.append(run)
                break
        else:
            groups.append([run])
    return tuple(tuple(r.algorithm for r in g) for g in groups if len(g) > 1)


def _check_comparable(replays: Sequence[Replay], target: str) -> None:
    first = replays[0]
    for run in replays[1:]:
        same = (
            run.steps == first.steps
            and run.names == first.names
            and [w.shape for w in run.weights] == [w.shape for w in first.weights]
            and run.num_replicas == first.num_replicas
        )
        if not same:
            raise ValueError(
                f"{target} did not run the same training under {first.algorithm!r} "
                f"({first.steps} steps, {len(first.names)} variables, {first.num_replicas} "
                f"replicas) and {run.algorithm!r} ({run.steps} steps, {len(run.names)} "
                f"variables, {run.num_replicas} replicas); the program must be deterministic "
                "(no clock or os.urandom seeds) for its runs to be compared."
            )


def compare(
    replays: Sequence[Replay], target: str = "program", rtol: float = RTOL, atol: float = ATOL
) -> SensitivityReport:
    """The report on ``replays`` of one program (one per algorithm).

    Raises:
        ValueError: the replays are not of the same training (steps, variables, replicas).
    """
    replays = tuple(replays)
    _check_comparable(replays, target)
    by_name = {r.algorithm: r for r in replays}
    reference = by_name.get(EXACT, replays[0])
    variables = tuple(
        VariableSpread(name, tuple(w.shape), w.dtype.name, spread([r.weights[i] for r in replays]))
        for i, (name, w) in enumerate(zip(replays[0].names, replays[0].weights, strict=True))
    )
    checks = tuple(_loss_check(r, reference, rtol, atol) for r in replays)
    return SensitivityReport(
        target, replays, reference.algorithm, rtol, atol, variables, checks, _groups(replays)
    )


def reduction_sensitivity(
    target: str | os.PathLike | Callable[[], object],
    *,
    replicas: int = 4,
    workers: int = 1,
    steps: int = 10,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    argv: Sequence[str] = (),
    rtol: float = RTOL,
    atol: float = ATOL,
    quiet: bool = True,
) -> SensitivityReport:
    """Replay ``target``'s training for ``steps`` steps under each algorithm; compare them.

    Args:
        target: a script's path (run unmodified as ``__main__``, with ``argv``) or a function
            run on every worker; it trains under a ``tf.distribute`` strategy.
        replicas: virtual GPUs per worker's host (a program that sets its own virtual
            devices keeps them; the report shows the replica count it ran).
        workers: workers of the virtual cluster (``MultiWorkerMirroredStrategy``); 1: one host.
        steps: training steps per replay (``strategy.run`` calls that apply gradients).
        algorithms: names from :data:`simdist.collectives.forced.FORCEABLE` (``tree`` is
            ``double_binary_tree``); ``exact`` is the correctly rounded exact sum.
        argv: the script's arguments.
        rtol, atol: the divergence tolerance (module docstring).
        quiet: hide what the program prints.

    Returns:
        A :class:`SensitivityReport`; ``str(report)`` is the table.

    Raises:
        ValueError: an unknown algorithm, ``steps``/``replicas``/``workers`` < 1, or a
            program that trained no step or trained differently between runs.
    """
    names = resolve_algorithms(list(algorithms))
    for label, value in (("steps", steps), ("replicas", replicas), ("workers", workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{label} must be an int >= 1, got {value!r}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")
    runs = [
        replay(
            target,
            name,
            steps=steps,
            workers=workers,
            devices_per_worker=replicas,
            argv=argv,
            quiet=quiet,
        )
        for name in names
    ]
    label = os.fspath(target) if not callable(target) else getattr(target, "__name__", "program")
    return compare(runs, label, rtol, atol)
