"""The ``simdist cost`` subcommand: nccl-tests-style collective tables and step scaling."""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser"]

# CLI name -> (collective, nccl-tests binary it mirrors)
CLI_COLLECTIVES = {
    "allreduce": "all_reduce",
    "reducescatter": "reduce_scatter",
    "allgather": "all_gather",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "alltoall": "all_to_all",
}


def _topology(name: str):
    from simdist.topology.presets import get_topology

    return get_topology(name)


def _collective(args: argparse.Namespace) -> int:
    from simdist.cost.report import format_nccl_table, nccl_table, parse_size, size_range

    try:
        sizes = size_range(
            parse_size(args.minbytes),
            parse_size(args.maxbytes),
            args.stepfactor,
            parse_size(args.stepbytes),
        )
        topology = _topology(args.topology)
        rows = nccl_table(
            CLI_COLLECTIVES[args.collective],
            args.algo,
            topology,
            sizes,
            dtype=args.datatype,
            op=args.op,
            num_ranks=args.ngpus,
            root=args.root,
        )
    except (ValueError, KeyError) as error:
        print(f"simdist cost: {error}", file=sys.stderr)
        return 2
    ranks = args.ngpus or topology.num_devices
    title = (
        f"simdist cost {args.collective}: {ranks} ranks on {topology.name}, "
        f"algorithm {args.algo} (predicted, alpha-beta model with contention)"
    )
    print(format_nccl_table(rows, title))
    return 0


def _step(args: argparse.Namespace) -> int:
    from simdist.cost.report import parse_size
    from simdist.cost.step import format_scaling_table, scaling_table

    try:
        counts = [int(c) for c in args.devices.split(",") if c.strip()]
        shape = tuple(int(d) for d in args.input_shape.split(","))
        topology = _topology(args.topology)
        rows = scaling_table(
            args.model,
            shape,
            args.batch_per_device,
            topology,
            counts,
            algorithm=args.algo,
            bucket_bytes=parse_size(args.bucket),
            dtype=args.dtype,
            optimizer=args.optimizer,
            launch_overhead=args.launch_overhead_us * 1e-6,
        )
    except (ValueError, KeyError) as error:
        print(f"simdist cost step: {error}", file=sys.stderr)
        return 2
    print(
        f"# {args.model} on {topology.name}: weak scaling, {args.batch_per_device} examples "
        f"per device, all-reduce {args.algo}, gradient buckets {args.bucket}, "
        f"kernel launch overhead {args.launch_overhead_us} us"
    )
    print(format_scaling_table(rows))
    if args.trace:
        from simdist.cost.trace import write_chrome_trace

        write_chrome_trace(rows[-1].step.timeline, args.trace)
        print(f"# Chrome trace of the {rows[-1].num_devices}-device step: {args.trace}")
    return 0


def add_parser(sub) -> None:
    """Add ``cost`` (and its subcommands) to the top-level subparsers ``sub``."""
    cost = sub.add_parser(
        "cost", help="predicted collective tables (nccl-tests columns) and step scaling"
    )
    kinds = cost.add_subparsers(dest="cost_command", required=True)
    for name in CLI_COLLECTIVES:
        p = kinds.add_parser(name, help=f"price {name} over a size range, like nccl-tests")
        p.add_argument("--topology", default="dgx-h100", help="preset name (simdist topology list)")
        p.add_argument("--algo", default="auto", help="algorithm, or auto (the selector)")
        p.add_argument("-b", "--minbytes", default="32M", help="smallest size (8, 8K, 1M, 8G)")
        p.add_argument("-e", "--maxbytes", default="32M", help="largest size")
        p.add_argument("-f", "--stepfactor", type=int, default=1, help="multiply size by this")
        p.add_argument("-i", "--stepbytes", default="1M", help="else add this many bytes")
        p.add_argument("-d", "--datatype", default="float", help="element type (nccl-tests' -d)")
        p.add_argument("-o", "--op", default="sum", help="reduction (does not change time)")
        p.add_argument("-r", "--root", type=int, default=0, help="root rank (broadcast, reduce)")
        p.add_argument("-g", "--ngpus", type=int, default=None, help="ranks (default: all)")
        p.set_defaults(handler=_collective, collective=name)
    step = kinds.add_parser("step", help="price a training step over device counts")
    step.add_argument(
        "--model", default="fashion-mnist-cnn", help="model name (fashion-mnist-cnn)"
    )
    step.add_argument("--input-shape", default="28,28,1", help="one example's shape")
    step.add_argument("--topology", default="dgx-h100")
    step.add_argument("--batch-per-device", type=int, default=64)
    step.add_argument("--devices", default="1,2,4,8", help="comma-separated device counts")
    step.add_argument("--algo", default="auto", help="all-reduce algorithm, or auto")
    step.add_argument("--bucket", default="25M", help="gradient bucket size (25M)")
    step.add_argument("--dtype", default="float32")
    step.add_argument("--optimizer", default="adam", choices=("sgd", "momentum", "adam"))
    step.add_argument(
        "--launch-overhead-us",
        type=float,
        default=0.0,
        help="microseconds added to every kernel (0: the pure roofline)",
    )
    step.add_argument("--trace", default=None, help="write the largest step's Chrome trace here")
    step.set_defaults(handler=_step)
