"""The BLAS thread policy: one thread after ``import simdist``, whatever the shell exports."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from simdist.core import blas_threads
from tests.fresh_process import key_values, run_program

_PROGRAM = """
import hashlib, numpy as np, simdist as tf
from simdist.core.blas_threads import blas_threads
print("threads", sorted({lib["num_threads"] for lib in blas_threads()}))
tf.random.set_seed(0)
rng = np.random.default_rng(0)
x = rng.random((64, 28, 28, 1), dtype=np.float32)
w = rng.random((300, 500), dtype=np.float32)
conv = tf.keras.layers.Conv2D(32, 3, activation="relu")
with tf.GradientTape() as tape:
    y = tf.reduce_sum(conv(tf.constant(x)))
(grad,) = tape.gradient(y, conv.trainable_variables[:1])
h = hashlib.sha256(grad.numpy().tobytes() + (w @ w.T).tobytes())
print("bits", h.hexdigest()[:16])
"""


def _run(**env: str) -> dict[str, str]:
    shell = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "SIMDIST_BLAS_THREADS")
    return key_values(run_program(_PROGRAM, env, shell.__contains__))


def test_import_sets_one_blas_thread_whatever_the_shell_exports():
    assert blas_threads.blas_threads(), "threadpoolctl found no BLAS library under NumPy"
    two = _run(OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2")
    one = _run(OPENBLAS_NUM_THREADS="1")
    assert two["threads"] == one["threads"] == _run()["threads"] == "[1]"
    # Left to OpenBLAS the two runs differ in their last bits (checked with "inherit").
    assert two["bits"] == one["bits"]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS caps its threads at the cores")
def test_inherit_leaves_the_blas_libraries_as_found():
    two = _run(SIMDIST_BLAS_THREADS="inherit", OPENBLAS_NUM_THREADS="2")
    assert two["threads"] == "[2]"
    assert _run(SIMDIST_BLAS_THREADS="inherit", OPENBLAS_NUM_THREADS="1")["threads"] == "[1]"
    assert _run(SIMDIST_BLAS_THREADS="2")["threads"] == "[2]"


def test_a_process_simdist_starts_loads_its_blas_with_the_policys_threads():
    from simdist.backends.process_env import with_blas_threads

    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "SIMDIST_BLAS_THREADS")
    }
    probe = (  # before any import of simdist: what the BLAS library started with
        "import numpy, threadpoolctl; print(sorted({l['num_threads'] for l in "
        "threadpoolctl.threadpool_info() if l['user_api'] == 'blas'}))"
    )
    started = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=with_blas_threads(base),
        timeout=60,
    )
    assert started.stdout.strip() == "[1]", started.stderr[-2000:]
    assert with_blas_threads({**base, "SIMDIST_BLAS_THREADS": "3"})["OPENBLAS_NUM_THREADS"] == "3"
    # what the caller chose stays, and so does a child that asks to inherit (or to fail)
    assert with_blas_threads({**base, "OPENBLAS_NUM_THREADS": "2"})["OPENBLAS_NUM_THREADS"] == "2"
    for asked in ("inherit", "two"):
        env = with_blas_threads({**base, "SIMDIST_BLAS_THREADS": asked})
        assert "OPENBLAS_NUM_THREADS" not in env and "MKL_NUM_THREADS" not in env


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_a_bad_setting_names_the_variable_and_the_choices(simdist_env, raw):
    with pytest.raises(ValueError, match=r"SIMDIST_BLAS_THREADS=.* positive number .*'inherit'"):
        simdist_env("SIMDIST_BLAS_THREADS", raw)


def test_the_environment_setting(simdist_env):
    simdist_env("SIMDIST_BLAS_THREADS", None)
    assert blas_threads.blas_threads_from_environment() == 1
    simdist_env("SIMDIST_BLAS_THREADS", " Inherit ")
    assert blas_threads.blas_threads_from_environment() is None
    simdist_env("SIMDIST_BLAS_THREADS", "3")
    assert blas_threads.blas_threads_from_environment() == 3


@pytest.mark.parametrize("bad", [0, -2, True, 1.0, "1"])
def test_set_blas_threads_rejects_what_is_not_a_thread_count(bad):
    with pytest.raises(ValueError, match="positive integer or None"):
        blas_threads.set_blas_threads(bad)


def test_set_blas_threads_changes_and_restores():
    try:
        blas_threads.set_blas_threads(2)
        assert {lib["num_threads"] for lib in blas_threads.blas_threads()} <= {1, 2}
    finally:
        blas_threads.set_blas_threads(1)
    assert {lib["num_threads"] for lib in blas_threads.blas_threads()} == {1}
