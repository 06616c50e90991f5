"""Under mpiexec: one rank raises inside run_worker_main (or calls ``transport.abort``)
while the others wait in MPI.

The job must end (nonzero) at once with the failing rank named on stderr; without the
wrapper the waiting ranks would block forever.

    mpiexec -n 2 python tests/backends/mpi_scripts/raise_on_rank.py --rank 1
"""

from __future__ import annotations

import argparse

from simdist.backends.mpi import MPITransport, run_worker_main


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, default=1)
    parser.add_argument("--abort", action="store_true", help="call transport.abort instead")
    args = parser.parse_args()
    transport = MPITransport()
    transport.barrier()
    if transport.worker_index == args.rank and args.abort:
        transport.abort(f"injected abort on rank {args.rank}")
    if transport.worker_index == args.rank:
        raise ValueError(f"injected failure on rank {args.rank}")
    transport.all_gather_object("never completes: the failing rank does not arrive")
    print("unreachable: the job should have been aborted", flush=True)


if __name__ == "__main__":
    run_worker_main(main)
