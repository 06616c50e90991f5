"""OpenBLAS's packing buffers, their pages mapped before the first real matrix product.

OpenBLAS copies ("packs") the operands of a matrix product into a buffer it allocated once
(a 32 MiB ``mmap`` in the builds NumPy ships; one per product running at the same time, so
one per thread that multiplies at that moment), and the OS maps a page of it when the page
is first touched. Its single-precision kernels reach past the end of the packed panel they
work on with accesses that never fault the page in (prefetches: ``/proc/self/pagemap``
shows the pages past the panel still unmapped after thousands of products). A product with
few columns (a convolution's 32 or 64 filters, a dense layer's 64 units: every product of
a simulated replica) packs a short panel, and nothing ever maps the pages just past it, so
each such access ends in a page walk that finds nothing, on every call, for as long as the
process lives (on a KVM guest the walk is two-dimensional, and dear): the product runs
1.8-2.7 times slower (3.2 beside busy processes).

Measured on the project's 2-core KVM machines (OpenBLAS 0.3.31, Haswell kernels, an AMD
EPYC host; ``scenarios/bench_blas_buffers.py``, figures in ``docs/performance.md``): the
tutorial CNN's filter gradient ``cols.T @ dy`` (7744x289 by 7744x64, float32) took 22.7 ms
in a fresh process and 8.5 ms with its buffer mapped, and its train step 51.5 against 41.4
ms at one replica, 67.3 against 52.3 ms at four. Touching the four pages just past the
packed panel was enough, and reading them was enough; a float64 product of the same shape
did not change.

So simdist maps those pages with one product whose panels are large: a float32 (512, 256)
by (256, 512) product per buffer, which packs the first megabyte of it. When
``simdist.core`` is imported that is one product on the calling thread (about 4 ms on
those machines); when the intra-op helpers start (``simdist.core.intra_op``), as many
products at the same time as threads may multiply at once, each on its own thread, so that
each takes a buffer of its own. Which buffer a product gets is OpenBLAS's choice (the
first one free), so this is a best effort: a thread the OS does not run in time leaves one
buffer as it was, which costs speed only. It runs only where threadpoolctl finds OpenBLAS,
and ``SIMDIST_BLAS_BUFFERS=inherit`` turns it off. No result depends on it: packing
overwrites what the product left in a buffer, and its result is thrown away.
"""

from __future__ import annotations

import threading

import numpy as np

from simdist import settings
from simdist.core import blas_threads

__all__ = ["map_buffers", "mapped_buffers"]

_PANEL_SHAPES = ((512, 256), (256, 512))
"""The product that maps a buffer: its packed panels span the buffer's first megabyte. A
384x384 product (fewer FLOPs) mapped too little: the tutorial CNN's step took 45.5 ms after
it against 42 ms after this one; 512x512 and 768x768 were no better than this one."""

_BARRIER_SECONDS = 5.0  # how long the threads of one call wait for each other at most

_lock = threading.Lock()
_mapped = 0  # buffers mapped so far (products run at the same time by one call)


def mapped_buffers() -> int:
    """How many buffers the calls so far have mapped (0 where it does not apply)."""
    return _mapped


def map_buffers(products: int) -> int:
    """Map the buffers of ``products`` matrix products running at the same time.

    Does nothing when as many were mapped already, when ``SIMDIST_BLAS_BUFFERS=inherit``,
    or when NumPy's BLAS is not OpenBLAS. Returns :func:`mapped_buffers`.
    """
    global _mapped
    if products <= _mapped or not _applies():
        return _mapped
    with _lock:
        if products > _mapped:
            _at_once(products)
            _mapped = products
    return _mapped


def _applies() -> bool:
    return settings.get().blas_buffers == "map" and "openblas" in blas_threads.blas_apis()


def _product() -> None:
    a, b = (np.ones(shape, dtype=np.float32) for shape in _PANEL_SHAPES)
    np.matmul(a, b)


def _at_once(count: int) -> None:
    """``count`` products, one on the calling thread and one on each of ``count - 1``
    short-lived threads, started together (a barrier) so that they overlap."""
    barrier = threading.Barrier(count, timeout=_BARRIER_SECONDS)

    def one() -> None:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:  # a thread late or gone: multiply anyway
            pass
        _product()

    threads = [
        threading.Thread(target=one, name="simdist-blas-buffers", daemon=True)
        for _ in range(count - 1)
    ]
    for thread in threads:
        thread.start()
    one()
    for thread in threads:
        thread.join()
