"""Benchmark: the deterministic MPI plan executor against raw ``comm.Allreduce``.

Run it under the launcher, one plan rank per process::

    mpiexec -n 2 python scenarios/bench_mpi.py [--quick]
    mpiexec -n 4 python scenarios/bench_mpi.py

For float32 buffers of 4 KiB .. 64 MiB per rank, rank 0 prints one row per algorithm:
``MPITransport.run_plan`` with the ring plan and with the selector's choice for that size
(bit-identical to the virtual run), the transport's ``native_allreduce=True`` fast option,
and MPI's own ``comm.Allreduce`` on the same buffers (into a preallocated output). Times are
the median over repeats of the slowest rank's time (each repeat starts at a barrier);
``busbw`` is NCCL's bus bandwidth, ``2 (p - 1) / p * bytes / time``. ``--quick`` stops at
1 MiB with fewer repeats (CI speed).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from simdist.backends.mpi import MPITransport, run_worker_main
from simdist.collectives.algorithms import build_plan
from simdist.collectives.api import make_spec
from simdist.collectives.selector import select_algorithm

KIB = 1024


def timed(transport, fn, repeats: int) -> float:
    """Median over ``repeats`` of the slowest rank's seconds for ``fn()`` (after a warm-up)."""
    fn()
    local = []
    for _ in range(repeats):
        transport.barrier()
        start = time.perf_counter()
        fn()
        local.append(time.perf_counter() - start)
    slowest = np.max(transport.all_gather_object(local), axis=0)
    return statistics.median(slowest.tolist())


def repeats_for(nbytes: int, quick: bool) -> int:
    if nbytes <= 256 * KIB:
        return 20 if quick else 50
    if nbytes <= 4 * 1024 * KIB:
        return 5 if quick else 10
    return 5


def bench_size(transport, native, nbytes: int, quick: bool) -> list[dict]:
    comm = transport.comm
    p, me = transport.num_workers, transport.worker_index
    elems = nbytes // 4
    x = np.random.default_rng([7, me]).standard_normal(elems).astype(np.float32)
    out = np.empty_like(x)
    repeats = repeats_for(nbytes, quick)
    mpi_s = timed(transport, lambda: comm.Allreduce(x, out), repeats)
    chosen = select_algorithm("all_reduce", nbytes, None, num_ranks=p)
    rows = []
    for algorithm in dict.fromkeys(["ring", chosen]):
        plan = build_plan(make_spec("all_reduce", algorithm, p, elems))
        label = algorithm + (" (selected)" if algorithm == chosen else "")
        seconds = timed(
            transport, lambda plan=plan: transport.run_plan(plan, (me,), [x], np.add), repeats
        )
        rows.append({"algorithm": label, "simdist": seconds, "mpi": mpi_s})
    ring = build_plan(make_spec("all_reduce", "ring", p, elems))
    seconds = timed(transport, lambda: native.run_plan(ring, (me,), [x], np.add), repeats)
    rows.append({"algorithm": "native_allreduce", "simdist": seconds, "mpi": mpi_s})
    for row in rows:
        row["bytes"] = nbytes
        row["busbw"] = 2 * (p - 1) / p * nbytes / row["simdist"] / 1e9 if p > 1 else 0.0
        row["mpi_busbw"] = 2 * (p - 1) / p * nbytes / row["mpi"] / 1e9 if p > 1 else 0.0
    return rows


def size_label(nbytes: int) -> str:
    return f"{nbytes // (1024 * KIB)} MiB" if nbytes >= 1024 * KIB else f"{nbytes // KIB} KiB"


def print_rows(rows: list[dict], p: int) -> None:
    print(f"all_reduce float32, {p} processes (one plan rank each); times: median of max rank")
    print(
        f"{'size':>8} {'algorithm':<30} {'simdist ms':>11} {'MPI ms':>9} {'ratio':>7} "
        f"{'busbw GB/s':>11} {'MPI busbw':>10}"
    )
    for r in rows:
        print(
            f"{size_label(r['bytes']):>8} {r['algorithm']:<30} {r['simdist'] * 1e3:>11.3f} "
            f"{r['mpi'] * 1e3:>9.3f} {r['simdist'] / r['mpi']:>7.2f} {r['busbw']:>11.2f} "
            f"{r['mpi_busbw']:>10.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="up to 1 MiB, fewer repeats")
    args = parser.parse_args()
    transport = MPITransport()
    native = MPITransport(native_allreduce=True)
    top = 1024 * KIB if args.quick else 64 * 1024 * KIB
    sizes = []
    nbytes = 4 * KIB
    while nbytes <= top:
        sizes.append(nbytes)
        nbytes *= 4
    rows = [row for nbytes in sizes for row in bench_size(transport, native, nbytes, args.quick)]
    if transport.worker_index == 0:
        print_rows(rows, transport.num_workers)
    native.close()
    transport.close()


if __name__ == "__main__":
    run_worker_main(main)
