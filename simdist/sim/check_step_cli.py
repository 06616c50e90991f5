"""``simdist check-step SCRIPT``: run a training script on N replicas and on one, compare.

Exit status: 0 when the two runs are equivalent within float rounding, 1 when a difference
(or an input problem) is found, 2 for bad input (no such script, bad counts, a script that
never trains under a strategy).
"""

from __future__ import annotations

import argparse
import sys

from simdist.cli_args import integer, script_file

__all__ = ["add_parser", "run"]

# Bounds of one check (it runs the script twice): far above any use.
MAX_REPLICAS = 1024
MAX_WORKERS = 64
MAX_STEPS = 1_000_000


def add_parser(sub) -> None:
    """Add ``check-step`` to the top-level subparsers ``sub`` of the simdist command."""
    p = sub.add_parser(
        "check-step",
        help="run a training script on N replicas and on 1 replica; compare loss, gradients "
        "and weights, and name the likely cause of a difference",
    )
    p.add_argument(
        "--replicas",
        type=integer(1, MAX_REPLICAS),
        default=None,
        help="virtual GPUs of the replicated run (default: what the script asks for)",
    )
    p.add_argument(
        "--steps",
        type=integer(1, MAX_STEPS),
        default=2,
        help="training steps to compare (default 2)",
    )
    p.add_argument(
        "--strategy",
        choices=("auto", "multi_worker"),
        default="auto",
        help="auto: run the script as it is; multi_worker: run it on every worker "
        "of a virtual cluster (--workers)",
    )
    p.add_argument(
        "--workers",
        type=integer(1, MAX_WORKERS),
        default=2,
        help="workers for --strategy multi_worker",
    )
    p.add_argument("script", type=script_file, help="the Python file to run as __main__")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from simdist.sim.check_step import check_script

    if args.workers < 1:
        print("simdist check-step: --workers must be >= 1", file=sys.stderr)
        return 2
    try:
        report = check_script(
            args.script, args.args, args.replicas, args.steps, args.strategy, args.workers
        )
    except (FileNotFoundError, ValueError) as exc:
        print(f"simdist check-step: {exc}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.equivalent else 1
