"""The PNG of a reduction-sensitivity report: the loss curves side by side (needs matplotlib).

Left: each algorithm's loss per training step (the curves lie on top of each other when
the order of additions barely matters). Right: each curve minus the reference's, the part
that shows the rounding. matplotlib is an optional extra (``pip install 'simdist[plot]'``);
it is imported here only, with the Agg backend (no display needed).
"""

from __future__ import annotations

import os

__all__ = ["MATPLOTLIB_MISSING", "require_matplotlib", "plot_losses"]

MATPLOTLIB_MISSING = (
    "the loss plot needs matplotlib, which is not installed; install it with "
    "`pip install 'simdist[plot]'` (or `pip install matplotlib`), or leave out --plot"
)


def require_matplotlib():
    """The ``matplotlib.pyplot`` module on the Agg backend.

    Raises:
        ModuleNotFoundError: matplotlib is not installed (the message says how to install it).
    """
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise ModuleNotFoundError(MATPLOTLIB_MISSING, name="matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_losses(report, path: str | os.PathLike) -> str:
    """Write the loss curves of ``report`` (a ``SensitivityReport``) to ``path`` as a PNG.

    Returns:
        The path written.

    Raises:
        ModuleNotFoundError: matplotlib is not installed.
        ValueError: no step of the report has a loss to plot.
    """
    plt = require_matplotlib()
    reference = next(r for r in report.replays if r.algorithm == report.reference)
    if all(v is None for v in reference.losses):
        raise ValueError("the training steps returned no loss, so there is no curve to plot")
    figure, (curves, gaps) = plt.subplots(1, 2, figsize=(12, 4.5))
    styles = ("-", "--", ":", "-.")  # identical curves stay visible under each other
    for index, run in enumerate(report.replays):
        style = styles[index % len(styles)]
        steps = [k for k, v in enumerate(run.losses, start=1) if v is not None]
        losses = [run.losses[k - 1] for k in steps]
        curves.plot(steps, losses, style, marker=".", label=run.algorithm)
        gap = [
            run.losses[k - 1] - reference.losses[k - 1]
            for k in steps
            if reference.losses[k - 1] is not None
        ]
        gaps.plot(steps[: len(gap)], gap, style, marker=".", label=run.algorithm)
    first = report.replays[0]
    curves.set_title(f"loss per step ({first.num_replicas} replicas, {first.strategy})")
    curves.set_xlabel("training step")
    curves.set_ylabel("loss (sum over replicas)")
    curves.legend()
    gaps.set_title(f"loss minus the {report.reference!r} run's")
    gaps.set_xlabel("training step")
    gaps.set_ylabel("difference")
    gaps.axhline(0.0, color="grey", linewidth=0.5)
    gaps.legend()
    figure.suptitle(f"Reduction-order sensitivity: {report.target}")
    figure.tight_layout()
    out = os.fspath(path)
    figure.savefig(out, format="png", dpi=100)
    plt.close(figure)
    return out
