"""The ``simdist cost`` subcommand: nccl-tests-style collective tables and step scaling.

Every argument is checked before any work starts, so bad input is one line on stderr and
exit status 2, never a traceback or a silent one-row table. The models ``cost step`` can
price come from the caller (the ``simdist`` command's name -> model map): this package knows
no model by name.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable

from simdist.cli_args import integer, nonempty, number, output_file

__all__ = ["add_parser", "MAX_SIZE_BYTES", "MAX_ROWS"]

# CLI name -> collective (the nccl-tests binary it mirrors: all_reduce_perf, ...)
CLI_COLLECTIVES = {
    "allreduce": "all_reduce",
    "reducescatter": "reduce_scatter",
    "allgather": "all_gather",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "alltoall": "all_to_all",
}
MAX_SIZE_BYTES = 2**40  # 1 TiB: larger buffers than any device holds; --no-size-limit lifts it
MAX_ROWS = 4096  # rows of one table; --no-size-limit lifts it
MAX_OVERHEAD_US = 1e9  # a per-kernel overhead above 1000 s is a typo, and sums overflow


class _UsageError(ValueError):
    """A bad command-line value (printed as one line, exit status 2)."""


def _topology(name: str, no_limit: bool):
    from simdist.topology.describe import resolve
    from simdist.topology.model import MAX_DEVICES

    try:
        return resolve(name, None if no_limit else MAX_DEVICES)
    except OSError as error:  # a topology file that cannot be read
        raise _UsageError(f"--topology {name}: {error.strerror or error}") from None
    except ValueError as error:
        raise _UsageError(f"--topology {name!r}: {error}") from None


def _check_trace_path(path: str | None) -> None:
    if not path:
        return
    if os.path.isdir(path):
        raise _UsageError(f"--trace {path} is a directory; name a file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise _UsageError(f"--trace {path}: folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK):
        raise _UsageError(f"--trace {path}: folder {folder} is not writable")


def _size(text: str, flag: str) -> int:
    from simdist.cost.report import parse_size

    try:
        return parse_size(text)
    except ValueError as error:
        raise _UsageError(f"{flag}: {error}") from None


def _sizes(args: argparse.Namespace) -> list[int]:
    from simdist.cost.report import size_range

    low = _size(args.minbytes, "-b/--minbytes")
    high = _size(args.maxbytes, "-e/--maxbytes")
    step = _size(args.stepbytes, "-i/--stepbytes")
    if not args.no_size_limit and max(low, high) > MAX_SIZE_BYTES:
        raise _UsageError(
            f"size {max(low, high)} B is above the limit of {MAX_SIZE_BYTES} B (1 TiB); pass "
            "--no-size-limit to price it anyway"
        )
    factor = args.stepfactor
    if factor is not None and factor < 2:
        raise _UsageError(
            f"-f/--stepfactor {factor} does not grow the size; use -f 2 or more, or leave -f "
            "out and step by -i BYTES"
        )
    if factor is None and step <= 0:
        raise _UsageError("-i/--stepbytes must be a positive size (8, 8K, 1M) when -f is not given")
    if low <= 0 or high <= 0:
        raise _UsageError(f"sizes must be positive, got -b {args.minbytes} -e {args.maxbytes}")
    rows = (
        math.floor(math.log(high / low, factor) + 1e-9) + 1
        if factor and high >= low
        else (high - low) // step + 1
        if high >= low
        else 0
    )
    if not args.no_size_limit and rows > MAX_ROWS:
        raise _UsageError(
            f"-b {args.minbytes} -e {args.maxbytes} gives {rows} rows, more than {MAX_ROWS}; "
            "use a step factor (-f 2) or a larger -i, or pass --no-size-limit"
        )
    return size_range(low, high, factor or 1, step)


def _check_collective_flags(args: argparse.Namespace, topology) -> None:
    """-d, -o, --proto and --algo checked one by one, so the message names the flag."""
    from simdist.cost.nccl_constants import PROTOCOLS
    from simdist.cost.pricing import price_call
    from simdist.cost.report import NCCL_OPS, NCCL_TYPES

    if args.datatype not in NCCL_TYPES:
        raise _UsageError(
            f"-d/--datatype: unknown type {args.datatype!r}; use one of {sorted(NCCL_TYPES)}"
        )
    if args.op not in NCCL_OPS:
        raise _UsageError(f"-o/--op: unknown reduction {args.op!r}; use one of {NCCL_OPS}")
    if args.proto != "auto" and args.proto not in PROTOCOLS:
        raise _UsageError(
            f"--proto: unknown NCCL protocol {args.proto!r}; use auto or {', '.join(PROTOCOLS)}"
        )
    ranks = args.ngpus or topology.num_devices
    if 2 <= ranks <= topology.num_devices:  # the real call's ranks; one small buffer
        try:
            price_call(CLI_COLLECTIVES[args.collective], args.algo, ranks, 1024, topology)
        except ValueError as error:
            raise _UsageError(f"--algo {args.algo}: {error}") from None


def _collective(args: argparse.Namespace) -> int:
    from simdist.cost.report import format_nccl_table, nccl_table

    try:
        sizes = _sizes(args)
        topology = _topology(args.topology, args.no_size_limit)
        if args.ngpus is not None and not 1 <= args.ngpus <= topology.num_devices:
            raise _UsageError(
                f"-g/--ngpus {args.ngpus} does not fit {topology.name!r} with "
                f"{topology.num_devices} devices; use 1 to {topology.num_devices}"
            )
        _check_collective_flags(args, topology)
        ranks = args.ngpus or topology.num_devices
        if args.root >= ranks:  # nccl-tests takes -r for every test; only an existing rank
            raise _UsageError(
                f"-r/--root: root rank {args.root} is outside the {ranks} ranks; use 0 to "
                f"{ranks - 1}"
            )
        rows = nccl_table(
            CLI_COLLECTIVES[args.collective],
            args.algo,
            topology,
            sizes,
            dtype=args.datatype,
            op=args.op,
            num_ranks=args.ngpus,
            root=args.root,
            protocol=args.proto,
        )
    except (ValueError, OSError, ImportError) as error:
        print(f"simdist cost {args.collective}: {error}", file=sys.stderr)
        return 2
    ranks = args.ngpus or topology.num_devices
    models = sorted({"NCCL's tuning model" if r.algorithm.startswith("nccl") else
                     "alpha-beta schedule with contention" for r in rows})  # fmt: skip
    title = (
        f"simdist cost {args.collective}: {ranks} ranks on {topology.name}, algorithm "
        f"{args.algo} (predicted: {', '.join(models)})"
    )
    print(format_nccl_table(rows, title))
    if any(r.algorithm.startswith("nccl") for r in rows):
        from simdist.cost.nccl_constants import NCCL_VERSION

        print(f"# NCCL's model as of NCCL {NCCL_VERSION}; see docs/cost-model.md for its error")
    return 0


def _check_overhead(value: float, flag: str) -> float:
    if not math.isfinite(value) or value < 0:
        raise _UsageError(f"{flag} must be a finite number of microseconds >= 0, got {value!r}")
    return value * 1e-6


def _step(args: argparse.Namespace) -> int:
    from simdist.cost.assumptions import StepAssumptions
    from simdist.cost.step import format_step_report, scaling_table

    try:
        if args.model not in args.models:
            names = ", ".join(args.models) or "none"
            raise _UsageError(f"--model: unknown model {args.model!r}; use one of: {names}")
        counts = []
        for text in args.devices.split(","):
            if not text.strip().isdigit() or int(text) < 1:
                raise _UsageError(f"--devices: {text.strip()!r} is not a positive integer")
            counts.append(int(text))
        try:
            shape = tuple(int(d) for d in args.input_shape.split(","))
        except ValueError:
            raise _UsageError(
                f"--input-shape {args.input_shape!r}: use comma-separated positive integers"
            ) from None
        if not shape or min(shape) < 1:
            raise _UsageError(f"--input-shape {args.input_shape!r}: sizes must be positive")
        if args.batch_per_device < 1:
            raise _UsageError(f"--batch-per-device must be >= 1, got {args.batch_per_device}")
        _check_trace_path(args.trace)
        assumptions = StepAssumptions(
            launch_overhead=_check_overhead(args.launch_overhead_us, "--launch-overhead-us"),
            framework_overhead=_check_overhead(
                args.framework_overhead_us, "--framework-overhead-us"
            ),
        )
        from simdist.cost.compute import DTYPE_SIZES

        if args.dtype not in DTYPE_SIZES:
            raise _UsageError(
                f"--dtype: unknown dtype {args.dtype!r}; use one of {sorted(DTYPE_SIZES)}"
            )
        bucket = _size(args.bucket, "--bucket")
        if bucket < 1:
            raise _UsageError(f"--bucket must be a positive size (25M, 1K), got {args.bucket!r}")
        topology = _topology(args.topology, False)
        if max(counts) > topology.num_devices:
            raise _UsageError(
                f"--devices {args.devices}: {topology.name!r} has {topology.num_devices} "
                f"devices, fewer than {max(counts)}; use a larger --topology"
            )
        if topology.num_devices >= 2:  # one device prices no all-reduce: check --algo anyway
            from simdist.cost.pricing import price_call

            try:
                price_call("all_reduce", args.algo, 2, 1024, topology)
            except ValueError as error:
                raise _UsageError(f"--algo {args.algo}: {error}") from None
        rows = scaling_table(
            args.models[args.model](),
            shape,
            args.batch_per_device,
            topology,
            counts,
            algorithm=args.algo,
            bucket_bytes=bucket,
            dtype=args.dtype,
            optimizer=args.optimizer,
            assumptions=assumptions,
        )
    except (ValueError, OSError, ImportError) as error:
        print(f"simdist cost step: {error}", file=sys.stderr)
        return 2
    print(
        f"# {args.model} on {topology.name}: weak scaling, {args.batch_per_device} examples "
        f"per device, all-reduce {args.algo}, gradient buckets {args.bucket}"
    )
    print(format_step_report(rows))
    if args.trace:
        from simdist.cost.trace import write_chrome_trace

        try:
            write_chrome_trace(rows[-1].step.timeline, args.trace)
        except OSError as error:
            print(f"simdist cost step: --trace {args.trace}: {error}", file=sys.stderr)
            return 2
        print(f"# Chrome trace of the {rows[-1].num_devices}-device step: {args.trace}")
    return 0


def add_parser(sub, models: dict[str, Callable[[], object]] | None = None) -> None:
    """Add ``cost`` (and its subcommands) to the top-level subparsers ``sub``.

    Args:
        sub: the ``simdist`` command's subparsers.
        models: name -> a function building the Keras model ``cost step`` prices.
    """
    from simdist.cost.assumptions import StepAssumptions

    models = dict(models or {})
    defaults = StepAssumptions()
    cost = sub.add_parser(
        "cost", help="predicted collective tables (nccl-tests columns) and step scaling"
    )
    kinds = cost.add_subparsers(dest="cost_command", required=True)
    topo_help = "preset name (simdist topology list) or a .json/.yml topology file"
    for name in CLI_COLLECTIVES:
        p = kinds.add_parser(name, help=f"price {name} over a size range, like nccl-tests")
        p.add_argument("--topology", default="dgx-h100", help=topo_help)
        p.add_argument(
            "--algo",
            type=nonempty,
            default="auto",
            help="auto (NCCL's model on GPU systems, else the selector), nccl, nccl:ring, "
            "nccl:tree, nccl:nvls, nccl:nvls_tree, or a simdist schedule (ring, tree, ...)",
        )
        p.add_argument("--proto", default="auto", help="NCCL protocol: auto, LL, LL128, Simple")
        p.add_argument("-b", "--minbytes", default="32M", help="smallest size (8, 8K, 1M, 8G)")
        p.add_argument("-e", "--maxbytes", default="32M", help="largest size")
        p.add_argument("-f", "--stepfactor", type=int, default=None, help="multiply size by this")
        p.add_argument("-i", "--stepbytes", default="1M", help="else add this many bytes")
        p.add_argument("-d", "--datatype", default="float", help="element type (nccl-tests' -d)")
        p.add_argument("-o", "--op", default="sum", help="reduction (does not change time)")
        p.add_argument(
            "-r", "--root", type=integer(0), default=0, help="root rank (broadcast, reduce)"
        )
        p.add_argument("-g", "--ngpus", type=integer(1), default=None, help="ranks (default: all)")
        p.add_argument(
            "--no-size-limit",
            action="store_true",
            help=f"allow sizes above 1 TiB, tables of more than {MAX_ROWS} rows, huge topologies",
        )
        p.set_defaults(handler=_collective, collective=name)
    step = kinds.add_parser("step", help="price a training step over device counts")
    listed = list(models)
    step.add_argument(
        "--model", default=listed[0] if listed else None, help=f"model: {', '.join(listed)}"
    )
    step.add_argument("--input-shape", default="28,28,1", help="one example's shape")
    step.add_argument("--topology", default="dgx-h100", help=topo_help)
    step.add_argument("--batch-per-device", type=integer(1), default=64)
    step.add_argument("--devices", default="1,2,4,8", help="comma-separated device counts")
    step.add_argument("--algo", type=nonempty, default="auto", help="all-reduce algorithm, or auto")
    step.add_argument("--bucket", default="25M", help="gradient bucket size (25M)")
    step.add_argument("--dtype", default="float32")
    step.add_argument("--optimizer", default="adam", choices=("sgd", "momentum", "adam"))
    step.add_argument(
        "--launch-overhead-us",
        type=number(0, maximum=MAX_OVERHEAD_US),
        default=defaults.launch_overhead * 1e6,
        help="microseconds of kernel launch per kernel (the step model's assumption)",
    )
    step.add_argument(
        "--framework-overhead-us",
        type=number(0, maximum=MAX_OVERHEAD_US),
        default=defaults.framework_overhead * 1e6,
        help="microseconds of framework (Python, dispatch) per op (the step model's assumption)",
    )
    step.add_argument(
        "--trace",
        type=output_file,
        default=None,
        help="write the largest step's Chrome trace here",
    )
    step.set_defaults(handler=_step, models=models)
