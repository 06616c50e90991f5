"""Without mpiexec: a launcher variable that claims more ranks than MPI's world has.

Started as a plain process with ``OMPI_COMM_WORLD_SIZE=2`` (which MPICH ignores), the world
holds one rank: ``MPITransport()`` must refuse. Prints ``GUARD <message>`` on success.
"""

from __future__ import annotations

import sys

from simdist.backends.mpi import MPITransport, import_mpi

if "Open MPI" in import_mpi().Get_library_version():  # it would honour the variable
    print("SKIP mpi4py is linked to Open MPI, which reads OMPI_COMM_WORLD_SIZE itself")
    sys.exit(0)
try:
    MPITransport()
except RuntimeError as exc:
    print(f"GUARD {exc}", flush=True)
    sys.exit(0)
print("NO GUARD: MPITransport() accepted a world smaller than the launcher's", flush=True)
sys.exit(1)
