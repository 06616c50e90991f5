"""simdist's BLAS thread policy: NumPy's BLAS runs one thread, set through threadpoolctl.

When ``simdist.core`` is imported it limits every BLAS library that NumPy has loaded
(OpenBLAS, MKL, BLIS, Accelerate: whatever ``threadpoolctl`` finds) to **one thread**, for
the whole process. Why one, for every matrix product (the measurements are in
``docs/performance.md``, from ``scenarios/bench_core.py``):

* **Determinism.** NumPy's BLAS splits a product between its threads by rows and columns,
  and the pieces then run other micro-kernels at their edges: the bits of ``a @ b`` depend
  on the thread count. With one thread they depend on the matrix only, so a program gives
  the same bits on a 2-core laptop and a 64-core server, in one process and under MPI (one
  rank per core), whatever ``OPENBLAS_NUM_THREADS`` the shell happens to export.
* **Busy machines.** OpenBLAS's idle workers spin; next to other processes (a second
  experiment, ``pytest -n auto``, the other ranks of an MPI job) they steal the core the
  next op needs: beside two busy processes on 2 cores the tutorial's CNN step took many
  times longer with two BLAS threads than with one.
* **Little to lose.** The matrices of a simulated replica are small (a 64-image batch gives
  products of a few hundred rows by tens of columns), where a second BLAS thread gains less
  than it costs to start and join; on the 2-core machines we measure on, even a lone
  1024x1024 product was no faster with two.

The override is ``SIMDIST_BLAS_THREADS``: a positive number of threads, or ``inherit`` to
leave the BLAS libraries as simdist found them (their own environment variables then rule,
and bits may change with the core count). :func:`set_blas_threads` changes it at run time;
it also covers BLAS libraries loaded after ``import simdist`` (SciPy's own OpenBLAS).
"""

from __future__ import annotations

import numpy  # noqa: F401 - loads NumPy's BLAS first: threadpoolctl sees loaded libraries only

try:
    import threadpoolctl
except ImportError as exc:  # a dependency of simdist: a broken install
    raise ImportError(
        "simdist needs threadpoolctl to hold NumPy's BLAS to one thread (its determinism "
        "contract); install it with `python3 -m pip install threadpoolctl`."
    ) from exc

from simdist import settings

__all__ = ["apply_policy", "blas_apis", "blas_threads", "set_blas_threads"]

_controller: threadpoolctl.ThreadpoolController | None = None


def blas_threads_from_environment() -> int | None:
    """The policy's setting (``SIMDIST_BLAS_THREADS``, read by :mod:`simdist.settings`): a
    thread count, or None for ``inherit`` (leave the BLAS libraries alone); unset: 1."""
    return settings.get().blas_threads


def _blas_controller(refresh: bool = False) -> threadpoolctl.ThreadpoolController:
    global _controller
    if _controller is None or refresh:
        _controller = threadpoolctl.ThreadpoolController()  # finds the loaded libraries
    return _controller


def set_blas_threads(threads: int | None) -> None:
    """Set NumPy's BLAS libraries to ``threads`` threads for the process (``None``: leave them).

    One thread is simdist's default and keeps results bit-identical across machines and
    transports; more threads may speed up a lone large matrix product on a quiet machine,
    and then the bits follow the thread count. Libraries loaded since the last call are
    included.

    Raises:
        ValueError: ``threads`` is not a positive integer or None.
    """
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise ValueError(f"BLAS threads must be a positive integer or None, got {threads!r}.")
    if threads is not None:
        _blas_controller(refresh=True).limit(limits=threads, user_api="blas")


def blas_threads() -> list[dict]:
    """Each BLAS library NumPy uses, as threadpoolctl reports it (``internal_api``,
    ``num_threads``, ``filepath``...): what the policy set, checked."""
    return [info for info in _blas_controller(refresh=True).info() if info["user_api"] == "blas"]


def blas_apis() -> set[str]:
    """The ``internal_api`` of each BLAS library loaded (``openblas``, ``mkl``, ``blis``...),
    as threadpoolctl found them at the last refresh."""
    return {
        info["internal_api"] for info in _blas_controller().info() if info["user_api"] == "blas"
    }


def apply_policy() -> None:
    """Apply ``SIMDIST_BLAS_THREADS`` (default one thread); run when ``simdist.core`` loads."""
    set_blas_threads(blas_threads_from_environment())
