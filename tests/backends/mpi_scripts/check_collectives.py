"""Under mpiexec: every collective x algorithm over MPITransport vs the one-process executor.

Every rank regenerates all ranks' inputs from the seed, runs the plan distributed (it owns
some plan ranks, per layout) and compares its own results, bit for bit, with
``executor.run_plan`` on all the inputs. Rank 0 prints one line: ``SUMMARY <json>``.

    mpiexec -n 2 python tests/backends/mpi_scripts/check_collectives.py [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time

import numpy as np

from simdist.backends.mpi import MPITransport, run_worker_main
from simdist.collectives import ALGORITHMS
from simdist.collectives.algorithms import build_plan
from simdist.collectives.api import make_spec
from simdist.collectives.executor import run_plan

REDUCING = ("all_reduce", "reduce_scatter", "reduce")
PIPELINED = {("all_reduce", "double_binary_tree"), ("broadcast", "ring"), ("reduce", "ring")}
DTYPES = (np.float32, np.float64, np.int32, np.float16)


def layout(name: str, workers: int, worker: int) -> tuple[int, tuple[int, ...]]:
    """(plan ranks, the ranks ``worker`` owns) for a layout of plan ranks over processes."""
    if name == "one":
        return workers, (worker,)
    if name == "two":
        return 2 * workers, (2 * worker, 2 * worker + 1)
    if name == "uneven":  # worker 0 owns two ranks, the others one: an odd rank count
        return workers + 1, ((0, 1) if worker == 0 else (worker + 1,))
    if name == "interleaved":  # worker w owns w and w + W: not contiguous
        return 2 * workers, (worker, worker + workers)
    raise ValueError(name)


def shape_kwargs(algorithm: str, p: int, variant: int) -> dict:
    if algorithm == "hierarchical":
        per_node = [d for d in range(2, p + 1) if p % d == 0 and d < p] or [p]
        return {"ranks_per_node": per_node[variant % len(per_node)]}
    if algorithm == "ring_per_dimension":
        tori = {2: [(2, 1), (1, 2)], 3: [(3, 1)], 4: [(2, 2)], 5: [(5, 1)], 8: [(2, 4), (2, 2, 2)]}
        options = tori[p]
        return {"torus_dims": options[variant % len(options)]}
    return {}


def cases(workers: int):
    """Deterministic case list, identical on every rank."""
    index = 0
    for collective, algorithms in ALGORITHMS.items():
        for algorithm in algorithms:
            for lay in ("one", "two", "uneven", "interleaved"):
                p, _ = layout(lay, workers, 0)
                for variant, rows in enumerate((1, 7, 13)):
                    dtype = DTYPES[index % len(DTYPES)]
                    limbs = 3 if variant == 2 else 0
                    kwargs = shape_kwargs(algorithm, p, variant)
                    if collective in ("broadcast", "reduce") or algorithm == "reduce_broadcast":
                        kwargs["root"] = (p - 1) if variant % 2 else min(1, p - 1)
                    if (collective, algorithm) in PIPELINED and variant == 1:
                        kwargs["chunks"] = 3
                    op = np.maximum if (collective in REDUCING and variant == 1) else np.add
                    yield index, collective, algorithm, lay, rows, dtype, limbs, op, kwargs
                    index += 1


def inputs(seed: int, index: int, p: int, elems: int, dtype, limbs: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, index])
    shape = (elems, limbs) if limbs else (elems,)
    if np.dtype(dtype).kind == "i":
        return [rng.integers(-1000, 1000, size=shape).astype(dtype) for _ in range(p)]
    return [rng.standard_normal(shape).astype(dtype) for _ in range(p)]


def same_bits(got, want) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def check_all(transport: MPITransport, seed: int) -> tuple[int, list[str]]:
    workers, me = transport.num_workers, transport.worker_index
    failures, count = [], 0
    for index, collective, algorithm, lay, rows, dtype, limbs, op, kwargs in cases(workers):
        p, mine = layout(lay, workers, me)
        elems = p * rows if collective == "all_to_all" else rows
        spec = make_spec(collective, algorithm, p, elems, **kwargs)
        plan = build_plan(spec)
        flats = inputs(seed, index, p, elems, dtype, limbs)
        ufunc = op if collective in REDUCING else None
        want = run_plan(plan, flats, ufunc)
        got = transport.run_plan(plan, mine, [flats[r] for r in mine], ufunc)
        count += 1
        for r, g in zip(mine, got, strict=True):
            if not same_bits(g, want[r]):
                failures.append(
                    f"case {index}: {collective}/{algorithm} layout={lay} p={p} rows={rows} "
                    f"dtype={np.dtype(dtype).name} limbs={limbs} {kwargs}: rank {r} differs"
                )
    return count, failures


def check_native(seed: int, failures: list[str]) -> None:
    """native_allreduce: MPI's Allreduce, close to (not bitwise) the plan's result."""
    transport = MPITransport(native_allreduce=True)
    workers, me = transport.num_workers, transport.worker_index
    for lay in ("one", "two"):
        p, mine = layout(lay, workers, me)
        for dtype in (np.float32, np.int64):
            plan = build_plan(make_spec("all_reduce", "ring", p, 1000))
            flats = inputs(seed, 10_000 + p, p, 1000, dtype, 0)
            want = run_plan(plan, flats, np.add)
            got = transport.run_plan(plan, mine, [flats[r] for r in mine], np.add)
            for r, g in zip(mine, got, strict=True):
                close = np.allclose(g, want[r], rtol=1e-5, atol=1e-5)
                exact = dtype != np.int64 or np.array_equal(g, want[r])
                if not (close and exact and g.dtype == want[r].dtype):
                    failures.append(f"native all_reduce layout={lay} {dtype}: rank {r} differs")
    transport.close()


def check_errors(transport: MPITransport, failures: list[str]) -> None:
    """Bad rank sets raise ValueError on every worker (none hangs)."""
    workers, me = transport.num_workers, transport.worker_index
    plan = build_plan(make_spec("all_reduce", "ring", workers + 1, 5))
    flat = np.zeros(5, np.float32)
    for ranks, what in (((me,), "a rank nobody owns"), ((0,), "rank 0 claimed twice")):
        try:
            transport.run_plan(plan, ranks, [flat], np.add)
        except ValueError:
            continue
        failures.append(f"{what}: no ValueError on worker {me}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    transport = MPITransport()
    count, failures = check_all(transport, args.seed)
    check_native(args.seed, failures)
    check_errors(transport, failures)
    objects = transport.all_gather_object({"worker": transport.worker_index})
    if objects != [{"worker": w} for w in range(transport.num_workers)]:
        failures.append(f"all_gather_object gave {objects}")
    transport.barrier()
    report = {
        "rank": transport.worker_index,
        "size": transport.num_workers,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "cases": count,
        "failures": failures,
        "seconds": round(time.perf_counter() - start, 3),
    }
    reports = transport.comm.gather(report, root=0)
    if transport.worker_index == 0:
        print("SUMMARY " + json.dumps({"reports": reports}), flush=True)
    transport.close()


if __name__ == "__main__":
    run_worker_main(main)
    sys.exit(0)
