"""The ``simdist topology`` subcommand: ``list`` the presets, ``show`` one topology."""

from __future__ import annotations

import argparse
import sys

from simdist.topology.model import MAX_DEVICES

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    from simdist.topology import describe

    if args.topology_command == "list":
        print(describe.list_table())
        return 0
    try:
        topology = describe.resolve(args.name, None if args.no_size_limit else MAX_DEVICES)
    except (ValueError, OSError, ImportError) as e:
        print(f"simdist topology show: {e}", file=sys.stderr)
        return 2
    print(describe.describe(topology))
    return 0


def add_parser(sub) -> None:
    """Add ``topology list`` and ``topology show NAME`` to the ``simdist`` subparsers."""
    topology = sub.add_parser("topology", help="list or describe device topologies")
    topology_sub = topology.add_subparsers(dest="topology_command", required=True)
    topology_sub.add_parser("list", help="the preset topologies")
    show = topology_sub.add_parser("show", help="one topology's devices, links and sources")
    show.add_argument("name", help="a preset name (e.g. dgx-h100, v4-32) or a .json/.yml file")
    show.add_argument(
        "--no-size-limit",
        action="store_true",
        help=f"build topologies of more than {MAX_DEVICES} devices (slow)",
    )
    topology.set_defaults(handler=_run)
