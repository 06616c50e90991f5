"""OpenBLAS's packing buffers mapped by one large product each: how many, on which threads,
and that no result depends on it."""

from __future__ import annotations

import threading
import time

import pytest

from simdist import settings
from simdist.core import blas_buffers, blas_threads
from tests.fresh_process import key_values, run_program

needs_openblas = pytest.mark.skipif(
    "openblas" not in blas_threads.blas_apis(),
    reason="NumPy's BLAS here is not OpenBLAS: there are no packing buffers to map",
)


@pytest.fixture
def recorded(monkeypatch):
    """``_product`` replaced by one that records its thread and waits (up to 5 s) until
    as many products as the call asked for are inside at once; ``_mapped`` from 0."""
    calls: list[tuple[int, int]] = []  # (thread id, products inside when it got in)
    inside = threading.Condition()
    state = {"inside": 0, "want": 1}

    def product() -> None:
        with inside:
            state["inside"] += 1
            calls.append((threading.get_ident(), state["inside"]))
            inside.notify_all()
            inside.wait_for(lambda: state["inside"] >= state["want"], timeout=5)

    def want(count: int) -> None:
        state.update(inside=0, want=count)

    monkeypatch.setattr(blas_buffers, "_product", product)
    monkeypatch.setattr(blas_buffers, "_mapped", 0)
    return calls, want


def test_one_product_per_buffer_each_on_its_own_thread_at_the_same_time(recorded, monkeypatch):
    calls, want = recorded
    monkeypatch.setattr(blas_buffers, "_applies", lambda: True)
    want(3)
    assert blas_buffers.map_buffers(3) == 3
    assert len(calls) == 3
    assert len({thread for thread, _ in calls}) == 3
    assert threading.get_ident() in {thread for thread, _ in calls}  # the caller is one
    assert max(count for _, count in calls) == 3  # all three inside at once
    assert not [t for t in threading.enumerate() if t.name == "simdist-blas-buffers"]


def test_buffers_mapped_already_are_not_mapped_again(recorded, monkeypatch):
    calls, want = recorded
    monkeypatch.setattr(blas_buffers, "_applies", lambda: True)
    want(2)
    assert blas_buffers.map_buffers(2) == 2
    assert blas_buffers.map_buffers(1) == 2
    assert blas_buffers.map_buffers(2) == 2
    assert len(calls) == 2
    want(3)
    assert blas_buffers.map_buffers(3) == 3  # one more thread: all three again
    assert len(calls) == 5


def test_inherit_maps_nothing(recorded):
    calls, _ = recorded
    with settings.override(blas_buffers="inherit"):
        assert blas_buffers.map_buffers(2) == 0
    assert calls == []


def test_a_thread_late_at_the_barrier_does_not_hang_the_call(recorded, monkeypatch):
    calls, want = recorded
    want(1)
    monkeypatch.setattr(blas_buffers, "_BARRIER_SECONDS", 0.05)
    monkeypatch.setattr(blas_buffers, "_applies", lambda: True)
    caller = threading.get_ident()

    class LateBarrier(threading.Barrier):
        def wait(self, timeout=None):
            if threading.get_ident() != caller:
                time.sleep(0.3)  # arrives after the caller's wait has timed out
            return super().wait(timeout)

    monkeypatch.setattr(threading, "Barrier", LateBarrier)
    assert blas_buffers.map_buffers(2) == 2
    assert len(calls) == 2  # the caller multiplied without it, then it did


_PROGRAM = """
import hashlib, numpy as np, simdist as tf
from simdist.core import blas_buffers
print("mapped", blas_buffers.mapped_buffers())
rng = np.random.default_rng(0)
x = rng.random((64, 28, 28, 1), dtype=np.float32)
w = rng.random((300, 64), dtype=np.float32)
conv = tf.keras.layers.Conv2D(32, 3, activation="relu")
with tf.GradientTape() as tape:
    y = tf.reduce_sum(conv(tf.constant(x)))
grads = tape.gradient(y, conv.trainable_variables)
h = hashlib.sha256(b"".join(g.numpy().tobytes() for g in grads) + (w.T @ w).tobytes())
print("bits", h.hexdigest()[:16])
"""


def _run(**env: str) -> dict[str, str]:
    return key_values(run_program(_PROGRAM, env, lambda name: name.startswith("SIMDIST_BLAS")))


@needs_openblas
def test_import_maps_the_callers_buffer_and_no_result_depends_on_it():
    mapped, left = _run(), _run(SIMDIST_BLAS_BUFFERS="inherit")
    assert mapped["mapped"] == "1" and left["mapped"] == "0"
    assert mapped["bits"] == left["bits"]
