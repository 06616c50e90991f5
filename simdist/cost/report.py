"""nccl-tests-style reports: sizes, algorithm and bus bandwidth of a priced collective.

The columns and the bus-bandwidth factors are nccl-tests' (NVIDIA/nccl-tests,
``doc/PERFORMANCE.md``): ``algbw = size / time``, ``busbw = algbw * factor`` with factor
``2(p-1)/p`` for all-reduce, ``(p-1)/p`` for reduce-scatter, all-gather and all-to-all, and
``1`` for broadcast and reduce, so that busbw is comparable to the link's bandwidth whatever
the rank count. ``size`` is the whole buffer as nccl-tests prints it (all-gather: the gathered
output; reduce-scatter: the input; all-to-all: one rank's send buffer); GB/s are 10^9 B/s.
Sizes parse as nccl-tests' ``-b/-e`` options do (``8``, ``8K``, ``1M``, ``8G``: binary units).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from simdist.cost.nccl import NcclEstimate
from simdist.cost.network import CollectiveCost
from simdist.cost.pricing import price_call
from simdist.topology.model import Topology

__all__ = [
    "COLLECTIVES",
    "NcclRow",
    "bus_factor",
    "parse_size",
    "size_range",
    "nccl_table",
    "format_nccl_table",
]

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all")

# nccl-tests' type names and sizes (the `-d` option).
NCCL_TYPES = {
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float16": 2,
    "bfloat16": 2,
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
}
_PRINTED_TYPE = {"float32": "float", "float16": "half", "float64": "double"}
NCCL_OPS = ("sum", "prod", "max", "min", "avg")
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


@dataclasses.dataclass(frozen=True)
class NcclRow:
    """One line of the table."""

    size: int  # bytes
    count: int  # elements
    type: str
    redop: str
    root: int
    time_us: float
    algbw: float  # GB/s
    busbw: float  # GB/s
    cost: CollectiveCost | NcclEstimate  # the schedule's link detail, or NCCL's choice
    algorithm: str = ""  # printed: "nccl:ring/LL128" or the schedule algorithm's name


def bus_factor(collective: str, num_ranks: int) -> float:
    """nccl-tests' busbw / algbw factor for ``collective`` over ``num_ranks`` ranks.

    Raises:
        ValueError: an unknown collective.
    """
    p = num_ranks
    if collective == "all_reduce":
        return 2 * (p - 1) / p
    if collective in ("reduce_scatter", "all_gather", "all_to_all"):
        return (p - 1) / p
    if collective in ("broadcast", "reduce"):
        return 1.0
    raise ValueError(f"unknown collective {collective!r}; use one of {COLLECTIVES}")


def parse_size(text: str) -> int:
    """Bytes from nccl-tests' size syntax: digits with an optional ``K``, ``M`` or ``G``.

    >>> parse_size("8"), parse_size("8K"), parse_size("1m"), parse_size("8G")
    (8, 8192, 1048576, 8589934592)

    Raises:
        ValueError: anything else (with the accepted forms).
    """
    match = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)\s*", str(text))
    if not match:
        raise ValueError(
            f"invalid size {text!r}; write a byte count with an optional K, M or G suffix "
            "(8, 8K, 1M, 8G)"
        )
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def size_range(min_bytes: int, max_bytes: int, factor: int = 2, step: int = 0) -> list[int]:
    """The sizes nccl-tests visits: ``min`` to ``max`` multiplying by ``factor`` (if > 1),
    else adding ``step``.

    Raises:
        ValueError: non-positive bounds, ``min > max``, or neither a factor > 1 nor a step.
    """
    if min_bytes <= 0 or max_bytes <= 0:
        raise ValueError(f"sizes must be positive, got -b {min_bytes} -e {max_bytes}")
    if min_bytes > max_bytes:
        raise ValueError(f"min size {min_bytes} is larger than max size {max_bytes}")
    if factor <= 1 and step <= 0:
        raise ValueError("give a step factor > 1 (-f) or a positive step in bytes (-i)")
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size = size * factor if factor > 1 else size + step
    return sizes


def nccl_table(
    collective: str,
    algorithm: str,
    topology: Topology,
    sizes: Sequence[int],
    dtype: str = "float32",
    op: str = "sum",
    num_ranks: int | None = None,
    root: int = 0,
    protocol: str = "auto",
) -> list[NcclRow]:
    """Price ``collective`` at each size, as nccl-tests would measure it.

    Each size is rounded down as nccl-tests does: to whole elements, and for reduce-scatter,
    all-gather and all-to-all to a multiple of ``num_ranks`` elements.

    Args:
        collective: one of :data:`COLLECTIVES`.
        algorithm: ``"auto"`` (NCCL's model on GPU systems, else the selector), ``"nccl"``,
            ``"nccl:ring"`` ... or an algorithm of ``simdist.collectives``
            (:func:`simdist.cost.pricing.price_call`).
        topology: where it runs.
        sizes: buffer sizes in bytes (see the module docstring for what ``size`` means).
        dtype: element type (nccl-tests' ``-d``).
        op: reduction (nccl-tests' ``-o``); it does not change the time.
        num_ranks: ranks taking part (default: every device of the topology).
        root: root rank of broadcast and reduce (printed; -1 for the others).
        protocol: NCCL's protocol (``auto``, ``LL``, ``LL128``, ``Simple``).

    Returns:
        One :class:`NcclRow` per size.

    Raises:
        ValueError: an unknown collective, dtype or op, a rank count the topology lacks, or
            a root outside the ranks.
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; use one of {COLLECTIVES}")
    if dtype not in NCCL_TYPES:
        raise ValueError(f"unknown type {dtype!r}; use one of {sorted(NCCL_TYPES)}")
    if op not in NCCL_OPS:
        raise ValueError(f"unknown reduction {op!r}; use one of {NCCL_OPS}")
    p = topology.num_devices if num_ranks is None else num_ranks
    if not 1 <= p <= topology.num_devices:
        raise ValueError(
            f"num_ranks={p} does not fit topology {topology.name!r} with "
            f"{topology.num_devices} devices"
        )
    if collective in ("broadcast", "reduce") and not 0 <= root < p:
        raise ValueError(f"root rank {root} is outside the {p} ranks; use 0 to {p - 1}")
    width = NCCL_TYPES[dtype]
    per_rank_split = collective in ("reduce_scatter", "all_gather", "all_to_all")
    factor = bus_factor(collective, p)
    rows = []
    for requested in sizes:
        count = int(requested) // width
        if per_rank_split:
            count = count // p * p
        size = count * width
        # the schedule's nbytes is each rank's input buffer: all-gather's is 1/p of the output
        nbytes = size // p if collective == "all_gather" else size
        call = price_call(
            collective, algorithm, p, nbytes, topology, width, protocol, total_bytes=size
        )
        seconds = call.time
        algbw = size / seconds / 1e9 if seconds > 0 else 0.0
        rows.append(
            NcclRow(
                size=size,
                count=count,
                type=_PRINTED_TYPE.get(dtype, dtype),
                redop=op if collective in ("all_reduce", "reduce_scatter", "reduce") else "none",
                root=root if collective in ("broadcast", "reduce") else -1,
                time_us=seconds * 1e6,
                algbw=algbw,
                busbw=algbw * factor,
                cost=call.detail,
                algorithm=call.algorithm,
            )
        )
    return rows


def _time_text(time_us: float) -> str:
    # nccl-tests switches precision with magnitude so the column stays 7 wide
    if time_us >= 10000:
        return f"{time_us:7.0f}"
    if time_us >= 100:
        return f"{time_us:7.1f}"
    return f"{time_us:7.2f}"


def format_nccl_table(rows: Sequence[NcclRow], title: str = "") -> str:
    """The rows laid out like nccl-tests' output (one out-of-place column group).

    Returns:
        The text: ``#`` header lines, one line per row, then nccl-tests' average bus
        bandwidth line.
    """
    lines = []
    if title:
        lines.append(f"# {title}")
    lines += [
        "#",
        f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}  "
        f"{'time':>7}  {'algbw':>6}  {'busbw':>6}  algorithm",
        f"# {'(B)':>10}  {'(elements)':>12}  {'':>8}  {'':>6}  {'':>6}  "
        f"{'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6}",
    ]
    for row in rows:
        lines.append(
            f"{row.size:12d}  {row.count:12d}  {row.type:>8}  {row.redop:>6}  {row.root:6d}  "
            f"{_time_text(row.time_us)}  {row.algbw:6.2f}  {row.busbw:6.2f}  "
            f"{row.algorithm or row.cost.algorithm}"
        )
    average = sum(r.busbw for r in rows) / len(rows) if rows else 0.0
    lines.append(f"# Avg bus bandwidth    : {average:g} ")
    return "\n".join(lines)
