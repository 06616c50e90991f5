"""``simdist sensitivity SCRIPT``: replay a training under each all-reduce algorithm, compare.

Exit status: 0 the report is printed and no loss curve left the tolerance; 1 some loss
curve diverged (the table says where); 2 bad input (an unknown algorithm, with the list;
counts below 1; a missing script; ``--plot`` without matplotlib; a script that trains no
step under a strategy). An exception the script raises comes through as it is.
"""

from __future__ import annotations

import argparse
import os
import sys

from simdist.cli_args import integer, nonempty, number, output_file, script_file
from simdist.collectives.forced import FORCEABLE

__all__ = ["add_arguments", "run"]

# Bounds of one run (each replay runs the script once per algorithm): far above any use.
MAX_REPLICAS = 1024
MAX_WORKERS = 64
MAX_STEPS = 1_000_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options (``simdist sensitivity --help``)."""
    from simdist.sim.sensitivity import ATOL, DEFAULT_ALGORITHMS, RTOL

    parser.add_argument(
        "--replicas", type=integer(1, MAX_REPLICAS), default=4, help="virtual GPUs per host (4)"
    )
    parser.add_argument(
        "--workers",
        type=integer(1, MAX_WORKERS),
        default=1,
        help="workers of a virtual cluster, for MultiWorkerMirroredStrategy (1: one host)",
    )
    parser.add_argument(
        "--steps", type=integer(1, MAX_STEPS), default=10, help="training steps per replay (10)"
    )
    parser.add_argument(
        "--algorithms",
        type=nonempty,
        default=",".join(DEFAULT_ALGORITHMS),
        help=f"comma-separated, from {', '.join(FORCEABLE)} ('tree' = double_binary_tree); "
        f"default {','.join(DEFAULT_ALGORITHMS)}",
    )
    parser.add_argument("--rtol", type=number(0), default=RTOL, help=f"divergence rtol ({RTOL:g})")
    parser.add_argument("--atol", type=number(0), default=ATOL, help=f"divergence atol ({ATOL:g})")
    parser.add_argument(
        "--plot", type=output_file, default=None, help="write the loss curves here (PNG)"
    )
    parser.add_argument("--show-output", action="store_true", help="show what the script prints")
    parser.add_argument(
        "script", type=script_file, help="the training script, run unmodified as __main__"
    )
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")


def _fail(message: str) -> int:
    print(f"simdist sensitivity: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Run the replays and print the report; returns the exit status (module docstring)."""
    from simdist.sim.sensitivity import reduction_sensitivity, resolve_algorithms

    try:
        algorithms = resolve_algorithms([a for a in args.algorithms.split(",") if a.strip()])
    except ValueError as exc:
        return _fail(f"--algorithms: {exc}")
    for name in ("replicas", "workers", "steps"):
        if getattr(args, name) < 1:
            return _fail(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.rtol < 0 or args.atol < 0:
        return _fail("--rtol and --atol must be >= 0")
    if not os.path.isfile(args.script):
        return _fail(f"no script {args.script!r}: give the path of a Python training script")
    if args.plot is not None:
        from simdist.sim.sensitivity_plot import require_matplotlib

        try:
            require_matplotlib()
        except ModuleNotFoundError as exc:
            return _fail(str(exc))
    try:
        report = reduction_sensitivity(
            args.script,
            replicas=args.replicas,
            workers=args.workers,
            steps=args.steps,
            algorithms=algorithms,
            argv=args.args,
            rtol=args.rtol,
            atol=args.atol,
            quiet=not args.show_output,
        )
    except ValueError as exc:
        if "trained no step" in str(exc) or "did not run the same training" in str(exc):
            return _fail(str(exc))
        raise
    print(report.table())
    if args.plot is not None:
        from simdist.sim.sensitivity_plot import plot_losses

        print(f"Loss curves: {plot_losses(report, args.plot)}")
    return 1 if report.diverged else 0
