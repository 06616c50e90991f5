"""``simdist explain-input``: which element lands on which worker and replica at each step.

:func:`explain_input` builds a dataset of *element ids* shaped like the user's input (an
in-memory ``range`` or lines of files, optionally shuffled, ``batch``-ed with the global
batch size and given an ``AutoShardPolicy``), distributes it with the real
:class:`~simdist.distribute.input_lib.DistributedDataset` on every worker of a W x L
cluster (one thread per worker; the "does any replica still have data" all-reduce is a
barrier among them), and records what each replica receives. Nothing is re-derived: the
table shows what a training loop would see, partial and empty batches included.

>>> print(explain_input(6, 4, workers=2, devices_per_worker=1, policy="DATA").format())
6 elements (range), batch(4), 2 workers x 1 replicas, policy DATA (applied: DATA)
step  worker  replica  elements  size  note
   0       0        0       0-1     2
   0       1        0       2-3     2
   1       0        0         4     1  partial
   1       1        0         5     1  partial
worker 0: 3 elements 0-1,4
worker 1: 3 elements 2-3,5
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from simdist import errors
from simdist.cli_args import INT64_MAX, integer, integer_list
from simdist.data.dataset import Dataset
from simdist.data.files import TextLineDataset, list_files
from simdist.data.options import AutoShardPolicy, Options
from simdist.data.sources import RangeDataset
from simdist.distribute.input_lib import DistributedDataset
from simdist.distribute.rebatch import batch_sizes_for_worker

__all__ = [
    "Explanation",
    "ReplicaBatch",
    "add_parser",
    "explain_input",
    "main",
    "run_input_cluster",
]

_BARRIER_TIMEOUT_S = 60.0
# What one explanation handles in seconds (about 10,000 elements a second); max_elements=None
# (--no-size-limit) lifts it. A table of more rows than this is not read anyway.
MAX_ELEMENTS = 20_000
MAX_FILES = 1024  # files written to a temporary folder
MAX_REPLICAS = 4096  # workers x devices_per_worker: one thread each


class _CountAllReduce:
    """The per-step SUM over workers of "how many local replicas got data"."""

    def __init__(self, num_workers: int) -> None:
        self._counts = [0] * num_workers
        self._barrier = threading.Barrier(num_workers, timeout=_BARRIER_TIMEOUT_S)

    def for_worker(self, worker: int) -> Callable[[int], int]:
        def reduce(count: int) -> int:
            self._counts[worker] = count
            self._barrier.wait()
            total = sum(self._counts)
            self._barrier.wait()  # nobody overwrites a count before all have summed
            return total

        return reduce

    def abort(self) -> None:
        self._barrier.abort()


def run_input_cluster(
    dataset: Dataset, num_workers: int, devices_per_worker: int
) -> tuple[list[list[list]], list[AutoShardPolicy]]:
    """Distribute ``dataset`` over a virtual W x L cluster; return every step's values.

    Returns:
        ``(steps, policies)``: ``steps[s][w][r]`` is the NumPy value replica ``r`` of
        worker ``w`` gets at step ``s``; ``policies[w]`` the policy applied on worker ``w``.

    Raises:
        The first error (lowest worker index) any worker raised, e.g. TF's FILE errors.
    """
    devices = tuple(f"GPU:{i}" for i in range(devices_per_worker))
    reducer = _CountAllReduce(num_workers)
    dists = [
        DistributedDataset(
            dataset,
            devices,
            num_workers=num_workers,
            worker_index=w,
            has_value_reducer=reducer.for_worker(w) if num_workers > 1 else None,
        )
        for w in range(num_workers)
    ]
    results: list[list] = [[] for _ in range(num_workers)]
    failures: list[BaseException | None] = [None] * num_workers

    def work(w: int) -> None:
        try:
            for step in dists[w]:
                parts = step.values if hasattr(step, "values") else (step,)
                results[w].append([p.numpy() for p in parts])
        except BaseException as exc:  # noqa: BLE001 - reported below, in worker order
            failures[w] = exc
            reducer.abort()

    threads = [threading.Thread(target=work, args=(w,)) for w in range(num_workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    raised = [f for f in failures if f is not None]
    if raised:  # a worker's own error before the others' broken barriers
        own = [f for f in raised if not isinstance(f, threading.BrokenBarrierError)]
        raise (own or raised)[0]
    steps = [list(ws) for ws in zip(*results, strict=True)]
    return steps, [d.auto_shard_policy for d in dists]


@dataclass(frozen=True)
class ReplicaBatch:
    """What one replica got at one step: element ids, and its share of a full global batch
    (``full_size``; fewer elements is a *partial* batch, none an *empty* one)."""

    step: int
    worker: int
    replica: int
    elements: tuple[int, ...]
    full_size: int

    @property
    def note(self) -> str:
        if not self.elements:
            return "empty"
        return "partial" if len(self.elements) < self.full_size else ""


def compress(ids: Sequence[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"0-2,5,7-8"`` (runs of consecutive ids); ``"-"`` if none."""
    if not ids:
        return "-"
    out, start, prev = [], ids[0], ids[0]
    for x in [*ids[1:], None]:
        if x is not None and x == prev + 1:
            prev = x
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if x is not None:
            start = prev = x
    return ",".join(out)


@dataclass(frozen=True)
class Explanation:
    """The result of :func:`explain_input`; ``format()`` prints it as a table."""

    title: str
    rows: tuple[ReplicaBatch, ...]
    num_workers: int

    def by_worker(self) -> list[list[int]]:
        """Every element id each worker received, in order."""
        return [
            [x for r in self.rows if r.worker == w for x in r.elements]
            for w in range(self.num_workers)
        ]

    def format(self) -> str:
        head = ("step", "worker", "replica", "elements", "size", "note")
        cells = [
            (
                str(r.step),
                str(r.worker),
                str(r.replica),
                compress(r.elements),
                str(len(r.elements)),
                r.note,
            )
            for r in self.rows
        ]
        widths = [
            max(len(h), *(len(c[i]) for c in cells)) if cells else len(h)
            for i, h in enumerate(head)
        ]
        title_row = "  ".join(h.rjust(n) for h, n in zip(head[:-1], widths, strict=False))
        lines = [self.title, f"{title_row}  {head[-1]}"]
        for c in cells:
            line = "  ".join(v.rjust(n) for v, n in zip(c[:-1], widths[:-1], strict=True))
            lines.append(f"{line}  {c[-1]}".rstrip())
        if not self.rows:
            lines.append("(no steps: the dataset yields no batch)")
        for w, ids in enumerate(self.by_worker()):
            lines.append(f"worker {w}: {len(ids)} elements {compress(sorted(ids))}")
        return "\n".join(lines)


def _share(policy, global_batch_size, workers, local, worker, step, replica) -> int:
    """The size this replica gets from full global batches (to mark partial batches)."""
    total = workers * local
    if total == 1:
        return global_batch_size
    if policy == AutoShardPolicy.DATA:
        piece = -(-global_batch_size // total)
        return max(0, min(piece, global_batch_size - (worker + replica * workers) * piece))
    sizes = batch_sizes_for_worker(global_batch_size, workers, local, worker)
    return sizes[(step * local + replica) % total]


def _build(num_elements, file_dir, file_sizes, list_files_reader, shuffle_files, seed):
    if file_sizes is None:
        return RangeDataset(num_elements)
    names, start = [], 0
    for i, size in enumerate(file_sizes):
        path = os.path.join(file_dir, f"part-{i:05d}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(f"{k}\n" for k in range(start, start + size)))
        names.append(path)
        start += size
    if not list_files_reader:
        return TextLineDataset(names)
    pattern = os.path.join(file_dir, "part-*.txt")
    return list_files(pattern, shuffle=shuffle_files, seed=seed).flat_map(TextLineDataset)


def explain_input(
    num_elements: int | None = None,
    global_batch_size: int = 1,
    workers: int = 1,
    devices_per_worker: int = 1,
    policy: str | AutoShardPolicy = "AUTO",
    drop_remainder: bool = False,
    shuffle: int | None = None,
    seed: int | None = 0,
    file_sizes: Sequence[int] | None = None,
    list_files_reader: bool = False,
    shuffle_files: bool = False,
    max_elements: int | None = MAX_ELEMENTS,
) -> Explanation:
    """Run the real distribution on element ids and record who gets what.

    Args:
        num_elements: an in-memory source ``range(num_elements)`` (or give ``file_sizes``).
        global_batch_size: ``batch(global_batch_size)``.
        workers: workers in the cluster; devices_per_worker: replicas on each.
        policy: an ``AutoShardPolicy`` or its name (AUTO, FILE, DATA, OFF, HINT).
        drop_remainder: of the batch.
        shuffle: a shuffle buffer applied before batching (None: no shuffle), with ``seed``.
        file_sizes: lines per file: element ids are numbered file after file, and the
            source is ``TextLineDataset(files)`` (or ``list_files(...).flat_map`` of it with
            ``list_files_reader``, shuffled by name with ``shuffle_files``).
        max_elements: the most elements (and replicas, and files: see ``MAX_REPLICAS``,
            ``MAX_FILES``) to explain, so the work is bounded; ``None``: no limit.

    Returns:
        An :class:`Explanation`.

    Raises:
        ValueError: bad counts or policy name, or both/neither of the two sources.
        The distribution's own errors (TF's FILE-sharding errors...).
    """
    if (num_elements is None) == (file_sizes is None):
        raise ValueError("Give either num_elements or file_sizes (one of them).")
    counts = {
        "global_batch_size": global_batch_size,
        "workers": workers,
        "devices_per_worker": devices_per_worker,
    }
    if shuffle is not None:
        counts["shuffle"] = shuffle
    for name, value in counts.items():
        _check_int(name, value, 1)
    if num_elements is not None:
        _check_int("num_elements", num_elements, 0)
        total = num_elements
        if list_files_reader or shuffle_files:
            raise ValueError(
                "list_files_reader and shuffle_files read files: give file_sizes, not num_elements."
            )
    else:
        file_sizes = list(file_sizes)
        if not file_sizes:
            raise ValueError("file_sizes must name at least one file's line count.")
        for size in file_sizes:
            _check_int("file_sizes", size, 0)
        total = sum(file_sizes)
    if max_elements is not None:
        limits = [
            (total, max_elements, "elements"),
            (workers * devices_per_worker, MAX_REPLICAS, "replicas (workers x devices_per_worker)"),
            (len(file_sizes or ()), MAX_FILES, "files"),
        ]
        for value, limit, what in limits:
            if value > limit:
                raise ValueError(
                    f"{value} {what} is above the limit of {limit}; pass max_elements=None "
                    "(--no-size-limit) to explain it anyway."
                )
    if isinstance(policy, str):
        try:
            policy = AutoShardPolicy[policy.upper()]
        except KeyError:
            names = ", ".join(p.name for p in AutoShardPolicy)
            raise ValueError(f"Unknown policy {policy!r}; use one of {names}.") from None
    with tempfile.TemporaryDirectory(prefix="simdist-explain-") as file_dir:
        dataset = _build(num_elements, file_dir, file_sizes, list_files_reader, shuffle_files, seed)
        if shuffle is not None:
            dataset = dataset.shuffle(shuffle, seed=seed)
        options = Options()
        options.experimental_distribute.auto_shard_policy = policy
        dataset = dataset.batch(global_batch_size, drop_remainder).with_options(options)
        steps, applied = run_input_cluster(dataset, workers, devices_per_worker)
    rows = tuple(
        ReplicaBatch(
            s,
            w,
            r,
            tuple(int(x) for x in np.asarray(v).reshape(-1).tolist()),
            _share(applied[w], global_batch_size, workers, devices_per_worker, w, s, r),
        )
        for s, step in enumerate(steps)
        for w, values in enumerate(step)
        for r, v in enumerate(values)
    )
    source = (
        f"{num_elements} elements (range)"
        if file_sizes is None
        else (
            f"{sum(file_sizes)} lines in {len(file_sizes)} files "
            f"({'list_files' if list_files_reader else 'TextLineDataset'})"
        )
    )
    shown = ", ".join(sorted({p.name for p in applied}))
    title = (
        f"{source}{f', shuffle({shuffle})' if shuffle else ''}, "
        f"batch({global_batch_size}{', drop_remainder' if drop_remainder else ''}), "
        f"{workers} workers x {devices_per_worker} replicas, policy {policy.name} "
        f"(applied: {shown})"
    )
    return Explanation(title, rows, workers)


def _check_int(name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    if value > INT64_MAX:
        raise ValueError(f"{name} must fit in int64 (<= {INT64_MAX}), got {value}.")


def add_parser(sub) -> None:
    """Add ``explain-input`` to the top-level subparsers ``sub`` of the simdist command."""
    p = sub.add_parser("explain-input", help="which element goes to which worker and replica")
    _add_arguments(p)
    p.set_defaults(handler=_run)


_POLICIES = tuple(p.name for p in AutoShardPolicy)


def _policy(text: str) -> str:
    if text.upper() not in _POLICIES:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(_POLICIES)}, got {text!r}")
    return text.upper()


def _add_arguments(p: argparse.ArgumentParser) -> None:
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--elements", type=integer(0), help="in-memory source: range(N)")
    source.add_argument("--files", type=integer_list(0), help="lines per file, e.g. 3,5,2")
    p.add_argument(
        "--list-files",
        action="store_true",
        help="read files with list_files(...).flat_map(TextLineDataset)",
    )
    p.add_argument("--shuffle-files", action="store_true", help="list_files(shuffle=True)")
    p.add_argument("--batch", type=integer(1), required=True, help="global batch size")
    p.add_argument("--workers", type=integer(1), default=1)
    p.add_argument("--devices-per-worker", type=integer(1), default=1)
    p.add_argument("--policy", type=_policy, default="AUTO", help=", ".join(_POLICIES))
    p.add_argument("--drop-remainder", action="store_true")
    p.add_argument("--shuffle", type=integer(1), default=None, help="shuffle buffer before batch")
    p.add_argument("--seed", type=integer(-(2**63)), default=0)
    p.add_argument(
        "--no-size-limit",
        action="store_true",
        help=f"explain more than {MAX_ELEMENTS} elements, {MAX_REPLICAS} replicas or "
        f"{MAX_FILES} files",
    )


def _flag_error(args: argparse.Namespace) -> str | None:
    """The first flag combination explain_input would refuse, named as a flag."""
    if args.elements is not None and (args.list_files or args.shuffle_files):
        flag = "--list-files" if args.list_files else "--shuffle-files"
        return f"{flag} reads files: use it with --files, not --elements"
    if args.no_size_limit:
        return None
    total = args.elements if args.elements is not None else sum(args.files)
    if total > MAX_ELEMENTS:
        flag = "--elements" if args.elements is not None else "--files"
        return (
            f"{flag}: {total} elements is above the limit of {MAX_ELEMENTS}; pass "
            "--no-size-limit to explain it anyway"
        )
    if args.workers * args.devices_per_worker > MAX_REPLICAS:
        return (
            f"--workers {args.workers} x --devices-per-worker {args.devices_per_worker} is above "
            f"the limit of {MAX_REPLICAS} replicas; pass --no-size-limit to explain it anyway"
        )
    if args.files is not None and len(args.files) > MAX_FILES:
        return (
            f"--files: {len(args.files)} files is above the limit of {MAX_FILES}; pass "
            "--no-size-limit to explain it anyway"
        )
    return None


def _run(args: argparse.Namespace) -> int:
    problem = _flag_error(args)
    if problem:
        print(f"simdist explain-input: {problem}", file=sys.stderr)
        return 2
    try:
        explanation = explain_input(
            num_elements=args.elements,
            global_batch_size=args.batch,
            workers=args.workers,
            devices_per_worker=args.devices_per_worker,
            policy=args.policy,
            drop_remainder=args.drop_remainder,
            shuffle=args.shuffle,
            seed=args.seed,
            file_sizes=args.files,
            list_files_reader=args.list_files,
            shuffle_files=args.shuffle_files,
            max_elements=None if args.no_size_limit else MAX_ELEMENTS,
        )
    except (ValueError, errors.OpError) as exc:
        # the pipeline's own errors, as TF would raise them (FILE sharding with too few
        # files...): what the user asked to see explained, so exit 1, not a usage error
        print(f"simdist explain-input: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(explanation.format())
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m simdist.distribute.explain_input ...`` (same flags as the subcommand)."""
    parser = argparse.ArgumentParser(
        prog="simdist explain-input", description="Explain how input is distributed."
    )
    _add_arguments(parser)
    return _run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
