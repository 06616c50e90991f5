"""The ``simdist conformance`` command: its options, and a handler that needs no import-time
hypothesis (the catalogue is imported when the command runs)."""

from __future__ import annotations

import argparse
import sys

from simdist.cli_args import integer, nonempty, output_file

# The most replicas / workers / examples one run starts: a conformance run is a test, and
# these are orders of magnitude above what any property needs.
MAX_REPLICAS = 64
MAX_WORKERS = 16
MAX_EXAMPLES = 100_000


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Adds the conformance options to ``parser`` and returns it."""
    parser.add_argument(
        "--impl",
        type=nonempty,
        default="simdist",
        help="simdist, reference, tensorflow, broken.<name>, an entry point of group "
        "simdist.adapters, or package.module:Factory",
    )
    parser.add_argument(
        "--replicas",
        type=integer(1, MAX_REPLICAS),
        default=4,
        help=f"the most replicas a property uses (1..{MAX_REPLICAS})",
    )
    parser.add_argument(
        "--workers",
        type=integer(1, MAX_WORKERS),
        default=None,
        help="the most workers a multi-worker property uses (default: the adapter's; "
        "tensorflow starts exactly this many local processes, default 2)",
    )
    parser.add_argument(
        "--properties",
        default=None,
        help="comma-separated property id globs, e.g. 'reduce.*,input.*' (default: all)",
    )
    parser.add_argument(
        "--junit", type=output_file, default=None, help="write a JUnit XML report here"
    )
    parser.add_argument(
        "--max-examples",
        type=integer(1, MAX_EXAMPLES),
        default=25,
        help="hypothesis examples per property",
    )
    parser.add_argument(
        "--random",
        action="store_true",
        help="draw fresh random examples (default: derandomized, the same on every run)",
    )
    parser.add_argument("--list", action="store_true", help="list the selected properties")
    return parser


def _handler(args: argparse.Namespace) -> int:
    try:
        from simdist.testing.runner import run_from_args
    except ImportError as error:
        print(
            f"simdist conformance needs hypothesis ({error}); pip install 'simdist[test]'",
            file=sys.stderr,
        )
        return 2
    return run_from_args(args)


def add_parser(sub) -> argparse.ArgumentParser:
    """Registers ``conformance`` on the ``simdist`` command's subparsers."""
    parser = sub.add_parser(
        "conformance",
        help="run the tf.distribute conformance catalogue against an implementation",
        description="Run the conformance catalogue (reduce, gather, input splitting, loss "
        "scaling, variables, checkpoints, error cases) against an implementation; "
        "exit 1 when a property fails.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=_handler)
    return parser
