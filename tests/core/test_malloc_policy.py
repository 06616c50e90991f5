"""The allocator policy: large temporaries reuse the heap, whatever another library set."""

from __future__ import annotations

import pytest

from simdist.core import malloc_policy
from tests.fresh_process import run_program

pytestmark = pytest.mark.skipif(
    malloc_policy.glibc() is None, reason="the policy sets glibc's malloc; this C library is not"
)

# A process that first fixes glibc's mmap threshold at 128 KiB (as a library calling
# mallopt does), then imports simdist and frees and allocates 4 MiB arrays: with the policy
# they come from the heap (no new page faults), with SIMDIST_MALLOC=inherit from mmap.
_PROGRAM = """
import ctypes, resource
ctypes.CDLL("libc.so.6").mallopt(-3, 128 * 1024)
import numpy as np
import simdist
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
a = np.ones(1 << 20, np.float32)
del a
before = faults()
for _ in range(50):
    a = np.ones(1 << 20, np.float32)  # 4 MiB, every page written
    del a
print(faults() - before)
"""


def _faults(**env: str) -> int:
    # NumPy asks for transparent huge pages on large arrays: where the kernel has 2 MiB pages
    # free, a fresh 4 MiB mapping faults twice, not 1024 times, and the count says nothing
    # (the inherit case below failed with 150 faults when it had them); 4 KiB pages here.
    env = {"NUMPY_MADVISE_HUGEPAGE": "0", **env}
    return int(run_program(_PROGRAM, env, "SIMDIST_MALLOC".__eq__).split()[-1])


def test_large_temporaries_reuse_the_heap_and_inherit_leaves_mmap_alone():
    # 50 fresh 4 MiB mappings fault 50 * 1024 pages; reused heap memory faults none
    assert _faults() < 1000
    assert _faults(SIMDIST_MALLOC="inherit") > 20_000


def test_a_bad_setting_names_the_variable_and_the_choices(simdist_env):
    with pytest.raises(ValueError, match=r"SIMDIST_MALLOC='big' must be 'simdist' .* 'inherit'"):
        simdist_env("SIMDIST_MALLOC", "big")


def test_apply_policy_reports_what_it_did(simdist_env):
    simdist_env("SIMDIST_MALLOC", "inherit")
    assert malloc_policy.apply_policy() is False
    simdist_env("SIMDIST_MALLOC", None)
    assert malloc_policy.apply_policy() is True
