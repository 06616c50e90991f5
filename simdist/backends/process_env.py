"""What a worker process takes from its environment: its deadline, its job key, its task.

The ``SIMDIST_*`` variables come from :mod:`simdist.settings` (``SIMDIST_WORKER_TIMEOUT``:
how long a worker waits at any blocking point, a collective, the goodbye at exit, the
start-up rendezvous, before ``DeadlineExceededError``; ``SIMDIST_JOB_KEY``: the secret that
authenticates the workers of one job, without which the key is derived from the cluster,
:func:`job_key`; ``SIMDIST_MPI_GUARD_FD``: set by :mod:`simdist.backends.mpi_guard`).
TensorFlow's ``TF_CONFIG`` (the process's task) is read through :func:`_read`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

from simdist import settings

__all__ = [
    "with_blas_threads",
    "worker_timeout",
    "job_key",
    "mpi_guard_fd",
    "tf_config_cluster",
    "training_cluster",
]

_KEY_DOMAIN = b"simdist job key v1\0"

# What NumPy's BLAS libraries read when they load, before simdist's policy can act (not
# OMP_NUM_THREADS: that would reach every OpenMP library of the child, not only its BLAS).
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def with_blas_threads(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a simdist process that this one starts, its BLAS loading with the policy's
    thread count.

    OpenBLAS starts its threads when NumPy loads it, before ``import simdist`` can hold them
    to the policy's count (:mod:`simdist.core.blas_threads`), and they spin a while on the
    way: about 0.12 s of CPU per process on the project's 2-core machines, paid by every MPI
    rank, TF_CONFIG task and test subprocess. So a child whose policy is N threads (unset:
    1) gets ``OPENBLAS_NUM_THREADS=N`` (and MKL's) where ``env`` does not name
    them already. The bits are the same: the child's policy sets N threads either way. A
    child asking for ``SIMDIST_BLAS_THREADS=inherit``, or with a value that does not parse
    (it will say so itself), is left as it is.
    """
    out = dict(env)
    try:
        threads = settings.Settings.from_environ(
            {k: v for k, v in out.items() if k == settings.env_name("blas_threads")}
        ).blas_threads
    except ValueError:
        return out
    if threads is not None:
        for name in BLAS_VARIABLES:
            out.setdefault(name, str(threads))
    return out


def _read(name: str) -> str | None:
    """The (non-simdist) environment variable ``name`` (``None`` when unset)."""
    return os.environ.get(name)


def worker_timeout(override: float | None = None) -> float:
    """The deadline in seconds: ``override`` if given, else ``SIMDIST_WORKER_TIMEOUT`` (600).

    Raises:
        ValueError: the variable is not a positive number of seconds.
    """
    return float(override) if override is not None else settings.get().worker_timeout


def mpi_guard_fd() -> str | None:
    """The descriptor of this rank's guard pipe (``None`` without a guard)."""
    return settings.get().mpi_guard_fd or None


def job_key(cluster: dict[str, list[str]]) -> tuple[bytes, str]:
    """The job's authentication key and where it came from (for messages).

    ``SIMDIST_JOB_KEY`` when set (a launcher's random secret, or the user's); otherwise a
    SHA-256 of the cluster's canonical JSON, which every task computes alike from its own
    ``TF_CONFIG``, so tasks started by hand in separate shells still meet. The derived key
    keeps apart jobs whose clusters differ (a stale worker of yesterday's job, two jobs that
    reuse a port); only a secret keeps out someone who can reach the ports and knows the
    cluster.
    """
    secret = settings.get().job_key
    if secret:
        return secret.encode("utf-8"), settings.env_name("job_key")
    canonical = json.dumps(cluster, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.sha256(_KEY_DOMAIN + canonical).digest(), "derived from the TF_CONFIG cluster"


def tf_config_cluster() -> tuple[list[str], list[str], int] | None:
    """This process's place in a cluster started one process per ``TF_CONFIG`` task.

    Returns:
        ``(addresses, names, index)``: the training tasks' addresses and names
        (``"chief:0"``, ``"worker:1"``) in worker order (the chief, then the workers, as
        ``id_in_cluster`` numbers them), and this task's index; ``None`` when ``TF_CONFIG``
        is unset, unreadable, names fewer than two training tasks, or makes this process
        no chief or worker (the cluster resolver reports malformed configurations).
    """
    raw = _read("TF_CONFIG")
    if not raw:
        return None
    try:
        config: Any = json.loads(raw)
        cluster = config.get("cluster") or {}
        task = config.get("task") or {}
        task_type, task_id = task.get("type"), int(task.get("index", 0))
        tasks = [("chief", i, a) for i, a in enumerate(cluster.get("chief", ()))]
        tasks += [("worker", i, a) for i, a in enumerate(cluster.get("worker", ()))]
    except (ValueError, TypeError, AttributeError):
        return None
    if len(tasks) < 2 or task_type not in ("chief", "worker"):
        return None
    names = [f"{job}:{i}" for job, i, _ in tasks]
    mine = f"{task_type}:{task_id}"
    if mine not in names:
        return None
    return [str(a) for _, _, a in tasks], names, names.index(mine)


def training_cluster() -> dict[str, list[str]]:
    """``TF_CONFIG``'s chief and worker jobs (the part every task shares), for the job key."""
    config = json.loads(_read("TF_CONFIG") or "{}")
    cluster = config.get("cluster") or {}
    return {job: list(cluster[job]) for job in ("chief", "worker") if job in cluster}
