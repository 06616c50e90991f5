"""What ``mpiexec`` told this process: its rank and the world size, from the launcher's variables.

Read without importing mpi4py: ``PMI_RANK``/``PMI_SIZE`` (MPICH's Hydra, Intel MPI) and
``OMPI_COMM_WORLD_RANK``/``OMPI_COMM_WORLD_SIZE`` (Open MPI). These readers sit in the
distribute runtime, below both the MPI cluster resolver and the transports that use them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["in_mpi_job", "mpi_world_from_env"]

# (family, rank variable, size variable), in the order they are consulted.
_LAUNCHER_VARS = (
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("MPICH/Hydra", "PMI_RANK", "PMI_SIZE"),
)


def _int_var(environ: Mapping[str, str], name: str) -> int:
    raw = environ[name]
    try:
        return int(raw)
    except ValueError:
        raise ValueError(
            f"{name}={raw!r} is not an integer; it is set by mpiexec, so unset it or launch "
            "the program with mpiexec."
        ) from None


def mpi_world_from_env(environ: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """``(rank, size)`` from the launcher's variables, or None outside an MPI job.

    Raises:
        ValueError: only one of a rank/size pair is set, a value is not an integer, the
            rank is outside [0, size), or two MPI families disagree (variables leaked from a
            parent process of another MPI).
    """
    env = os.environ if environ is None else environ
    found: list[tuple[str, int, int]] = []
    for family, rank_var, size_var in _LAUNCHER_VARS:
        if rank_var not in env and size_var not in env:
            continue
        if rank_var not in env or size_var not in env:
            missing = rank_var if rank_var not in env else size_var
            raise ValueError(
                f"{family} variables are half set: {missing} is missing; mpiexec sets both, "
                "so launch with mpiexec or unset the other one."
            )
        rank, size = _int_var(env, rank_var), _int_var(env, size_var)
        if size < 1 or not 0 <= rank < size:
            raise ValueError(
                f"{rank_var}={rank} and {size_var}={size}: the rank must be in [0, size) "
                "with size >= 1."
            )
        found.append((family, rank, size))
    if not found:
        return None
    family, rank, size = found[0]
    for other, other_rank, other_size in found[1:]:
        if (other_rank, other_size) != (rank, size):
            raise ValueError(
                f"{family} says rank {rank} of {size} but {other} says rank {other_rank} of "
                f"{other_size}: variables leaked from another MPI's launcher. Start mpiexec "
                "with a clean environment (no OMPI_*/PMIX_*/PMI_* inherited)."
            )
    return rank, size


def in_mpi_job(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process was started by ``mpiexec`` (its rank variables are set)."""
    return mpi_world_from_env(environ) is not None
