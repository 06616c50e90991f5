"""The MPI cluster resolver: rank -> worker task index, read from what ``mpiexec`` sets.

Under ``mpiexec -n W`` every process is worker ``rank`` of a ``W``-worker cluster. The
rank and size come from the launcher's environment variables, so mpi4py is never
imported here: ``PMI_RANK``/``PMI_SIZE`` (MPICH's Hydra, Intel MPI) and
``OMPI_COMM_WORLD_RANK``/``OMPI_COMM_WORLD_SIZE`` (Open MPI). The cluster's addresses
are placeholders (``localhost:<base_port + rank>``): MPI does the communication.

Guard against the mixed-MPI trap (an mpi4py built for one MPI started by another MPI's
``mpiexec`` runs W single-rank copies): pass the communicator's own size and rank
(``world_size=comm.Get_size()``, ``rank=comm.Get_rank()``); if the launcher says
otherwise, the resolver raises instead of letting every copy train alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec
from simdist.distribute.cluster_resolver.resolvers import (
    ClusterResolver,
    TFConfigClusterResolver,
    format_master_url,
)
from simdist.distribute.mpi_env import in_mpi_job, mpi_world_from_env

__all__ = ["MPIClusterResolver", "default_cluster_resolver", "in_mpi_job", "mpi_world_from_env"]

DEFAULT_BASE_PORT = 20000


class MPIClusterResolver(ClusterResolver):
    """Resolve the cluster of an ``mpiexec`` job: W workers, this process is worker ``rank``.

    Args:
        world_size: the communicator's size (``COMM_WORLD.Get_size()``); checked against
            the launcher's variables. Needed when not under ``mpiexec``.
        rank: the communicator's rank; checked likewise.
        host: the host part of the placeholder addresses.
        base_port: worker ``i`` gets ``host:base_port + i``.
        rpc_layer: returned by ``rpc_layer`` and used in ``master()``.
        environ: the environment to read (default ``os.environ``).

    Raises:
        RuntimeError: the launcher and the explicit ``world_size``/``rank`` disagree (the
            mixed-MPI trap: the ranks did not form one world).
        ValueError: no MPI variables and no explicit ``world_size`` and ``rank``; or
            malformed variables or arguments.
    """

    def __init__(
        self,
        world_size: int | None = None,
        rank: int | None = None,
        host: str = "localhost",
        base_port: int = DEFAULT_BASE_PORT,
        rpc_layer: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        world = mpi_world_from_env(environ)
        if world is not None:
            env_rank, env_size = world
            if world_size is not None and world_size != env_size:
                raise RuntimeError(
                    f"mpiexec started {env_size} ranks (PMI_SIZE/OMPI_COMM_WORLD_SIZE) but the "
                    f"MPI communicator has {world_size}: mpi4py is linked to a different MPI "
                    "than the mpiexec that launched it, so each rank would run alone. Use the "
                    "mpiexec of the MPI mpi4py was built with (e.g. the venv's own bin/mpiexec)."
                )
            if rank is not None and rank != env_rank:
                raise RuntimeError(
                    f"mpiexec says this is rank {env_rank} but the MPI communicator says rank "
                    f"{rank}: the launcher and mpi4py disagree; use the matching mpiexec."
                )
            rank, world_size = env_rank, env_size
        elif world_size is None or rank is None:
            raise ValueError(
                "Not running under mpiexec (no PMI_RANK/PMI_SIZE or OMPI_COMM_WORLD_RANK/SIZE "
                "set): launch with `mpiexec -n W python ...`, pass world_size= and rank=, or "
                "use TFConfigClusterResolver."
            )
        for name, value in (("world_size", world_size), ("rank", rank)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an integer, got {value!r}.")
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} must be in [0, world_size={world_size}).")
        if base_port < 0 or base_port + world_size - 1 > 65535:
            raise ValueError(
                f"base_port {base_port} leaves no room for {world_size} ports below 65536."
            )
        self._world_size = world_size
        self._host = host
        self._base_port = base_port
        self._task_type = "worker"
        self._task_id = rank
        self._rpc_layer = rpc_layer

    @property
    def world_size(self) -> int:
        """The number of MPI ranks (= workers)."""
        return self._world_size

    def cluster_spec(self) -> ClusterSpec:
        """``{"worker": [host:base_port, ..., host:base_port + W - 1]}``."""
        return ClusterSpec(
            {"worker": [f"{self._host}:{self._base_port + i}" for i in range(self._world_size)]}
        )

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """``""`` for a one-rank job, else the given (or this) task's URL."""
        if self._world_size == 1:
            return ""
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        address = self.cluster_spec().task_address(task_type, task_id)
        return format_master_url(address, rpc_layer if rpc_layer is not None else self.rpc_layer)


def default_cluster_resolver(environ: Mapping[str, str] | None = None) -> ClusterResolver:
    """The resolver a strategy uses when given none: MPI under ``mpiexec``, else TF_CONFIG."""
    if in_mpi_job(environ):
        return MPIClusterResolver(environ=environ)
    return TFConfigClusterResolver()
