"""simdist's memory-allocator policy: large NumPy temporaries reuse the heap, not fresh pages.

A training step of a simulated replica allocates and frees tens of MB of temporaries
(im2col windows, activations, masks, gradients), many of them above 128 KiB. glibc's
``malloc`` serves such a block with a fresh ``mmap`` while the block is above its *mmap
threshold*; every page of it then faults in on first touch and is unmapped on ``free``.
glibc raises that threshold by itself after the first large ``free`` (up to 32 MiB on
64-bit, with the trim threshold at twice that), so a lone simdist process soon reuses its
heap, but the raising stops for good once any library of the process calls ``mallopt``,
and a process that has just freed a large block may not have raised it yet.

Measured (``docs/performance.md``): in a process that had built and run TensorFlow models
(TensorFlow's differential tests, the conformance adapter, the side-by-side benchmarks),
the tutorial CNN's step on simdist took 5,000-7,000 minor page faults and 11-16 ms of
system time per step, against about 20 faults and 0.3 ms in a process of its own (2,900
faults in one run of five there too); the step's wall time went from 26 to 37-79 ms. With
this policy it is 3-40 faults and 0.3 ms in both.

The policy sets what glibc's own adaptation converges to: ``M_MMAP_THRESHOLD`` 32 MiB and
``M_TRIM_THRESHOLD`` 64 MiB, when ``simdist.core`` is imported, on glibc only (elsewhere it
does nothing). It changes no result, only where freed memory waits: up to 64 MiB per malloc
arena may stay with the process instead of going back to the system. The override is
``SIMDIST_MALLOC=inherit`` (leave the allocator alone); :func:`apply_policy` sets it again
after a library has changed it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

from simdist import settings

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "apply_policy", "glibc"]

# glibc's mallopt parameter numbers (malloc.h) and the values its dynamic rule tops out at
# (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit; the trim threshold follows as twice it).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD


def glibc():
    """The C library as a ``ctypes.CDLL`` when it is glibc (it has ``mallopt``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None  # musl and others: a different allocator, nothing to set
    return libc


def apply_policy() -> bool:
    """Set glibc's mmap and trim thresholds (unless ``SIMDIST_MALLOC=inherit``).

    Runs when ``simdist.core`` loads. Returns whether the thresholds were set.
    """
    if settings.get().malloc_policy == "inherit":
        return False
    libc = glibc()
    if libc is None:
        return False
    libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; the mmap threshold first (glibc caps it at 32 MiB)
    ok = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
