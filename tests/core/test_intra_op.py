"""Intra-op blocks: each runs once, on any number of threads, and the bits never move."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from simdist.core import intra_op


@pytest.fixture
def threads():
    """Set the intra-op thread count for a test; restored afterwards."""
    before = intra_op.intra_op_threads()
    yield intra_op.set_intra_op_threads
    intra_op.set_intra_op_threads(before)


@pytest.mark.parametrize("count", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("num_threads", [1, 2, 4])
def test_every_block_runs_exactly_once(threads, count, num_threads):
    threads(num_threads)
    seen: list[int] = []
    intra_op.run_blocks(count, seen.append)  # list.append is atomic under the GIL
    assert sorted(seen) == list(range(count))


def _thread_names(block_flops=None) -> set[str]:
    """The threads that ran 8 blocks; blocks 0 and 1 can only finish together, so where the
    blocks are shared two threads must have run them."""
    names: set[str] = set()
    barrier = threading.Barrier(2, timeout=10)

    def block(i: int) -> None:
        names.add(threading.current_thread().name)
        if i < 2:
            barrier.wait()

    intra_op.run_blocks(8, block, block_flops)
    return names


@pytest.mark.parametrize("block_flops", [None, intra_op.MIN_SHARED_FLOPS])
def test_helpers_take_blocks_when_there_are_threads(threads, block_flops):
    threads(2)
    names = _thread_names(block_flops)
    assert "simdist-intra-op" in names and len(names) == 2


def test_blocks_with_little_arithmetic_stay_on_the_calling_thread(threads):
    threads(2)
    names: set[str] = set()
    small = intra_op.MIN_SHARED_FLOPS / 2
    intra_op.run_blocks(8, lambda i: names.add(threading.current_thread().name), small)
    assert names == {threading.current_thread().name}


def test_the_fused_convolution_shares_its_blocks_only_when_they_are_large(threads, monkeypatch):
    """The tutorial CNN's first convolution (K=9, 32 filters: ~1 MFLOP a block) runs on the
    caller alone; its second (K=288, 64 filters: ~75 MFLOP a block) is shared."""
    import simdist as tf
    from simdist.core.ops.fused_ops import conv2d_bias_activation

    threads(2)
    shared: list[bool] = []
    real = intra_op.run_blocks

    def spy(count, fn, block_flops=None):
        shared.append(block_flops is None or block_flops >= intra_op.MIN_SHARED_FLOPS)
        return real(count, fn, block_flops)

    monkeypatch.setattr("simdist.core.ops.fused_ops.run_blocks", spy)
    rng = np.random.default_rng(0)
    first = conv2d_bias_activation(
        tf.constant(rng.random((64, 28, 28, 1), dtype=np.float32)),
        tf.constant(rng.random((3, 3, 1, 32), dtype=np.float32)),
    )
    second = conv2d_bias_activation(
        tf.constant(rng.random((64, 13, 13, 32), dtype=np.float32)),
        tf.constant(rng.random((3, 3, 32, 64), dtype=np.float32)),
    )
    assert first.shape == (64, 26, 26, 32) and second.shape == (64, 11, 11, 64)
    assert shared == [False, True]


def test_the_first_error_is_raised_and_nothing_hangs(threads):
    threads(3)
    ran: list[int] = []

    def block(i: int) -> None:
        ran.append(i)
        if i == 3:
            raise ZeroDivisionError("block 3")

    with pytest.raises(ZeroDivisionError, match="block 3"):
        intra_op.run_blocks(50, block)
    assert 3 in ran and len(ran) < 50  # blocks not started after the error are skipped
    intra_op.run_blocks(4, lambda i: None)  # the pool still works


def test_a_nested_or_concurrent_call_runs_on_its_own_thread(threads):
    threads(2)
    out = np.zeros((4, 5))

    def outer(i: int) -> None:
        intra_op.run_blocks(5, lambda j: out.__setitem__((i, j), 10 * i + j))

    intra_op.run_blocks(4, outer)
    assert out.tolist() == [[10 * i + j for j in range(5)] for i in range(4)]
    results = {}
    users = [
        threading.Thread(
            target=lambda k=k: intra_op.run_blocks(30, lambda i, k=k: results.setdefault((k, i), 1))
        )
        for k in range(3)
    ]
    for user in users:
        user.start()
    for user in users:
        user.join(timeout=30)
    assert len(results) == 90


@pytest.mark.parametrize("raw", ["-3", "many", "2.0"])
def test_a_bad_setting_names_the_variable(simdist_env, raw):
    with pytest.raises(ValueError, match=r"SIMDIST_INTRA_OP_THREADS=.* number of threads"):
        simdist_env("SIMDIST_INTRA_OP_THREADS", raw)


def test_the_default_is_one_thread_per_usable_cpu(simdist_env):
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    simdist_env("SIMDIST_INTRA_OP_THREADS", None)
    assert intra_op.intra_op_threads_from_environment() == cpus
    simdist_env("SIMDIST_INTRA_OP_THREADS", "0")
    assert intra_op.intra_op_threads_from_environment() == cpus
    simdist_env("SIMDIST_INTRA_OP_THREADS", "3")
    assert intra_op.intra_op_threads_from_environment() == 3


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "2"])
def test_set_rejects_what_is_not_a_thread_count(bad):
    with pytest.raises(ValueError, match="positive integer"):
        intra_op.set_intra_op_threads(bad)


@pytest.mark.parametrize("size", [1, 7, 2048, 5000])
def test_blocks_depend_on_the_shapes_only(size):
    assert intra_op.items_per_block(size, 2048) == max(1, 2048 // size)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_helpers_may_use_every_cpu_even_if_started_from_a_pinned_thread(threads, monkeypatch):
    threads(2)
    monkeypatch.setattr(intra_op, "_helpers", [])  # new helpers, started by the pinned thread
    cpus = os.sched_getaffinity(0)
    seen: list[set[int]] = []

    def pinned_user() -> None:
        os.sched_setaffinity(0, {min(cpus)})
        barrier = threading.Barrier(2, timeout=10)

        def block(i: int) -> None:
            if i < 2:
                barrier.wait()  # both threads are in a block: the helper is one of them
            if threading.current_thread().name == "simdist-intra-op":
                seen.append(os.sched_getaffinity(0))

        intra_op.run_blocks(4, block)

    user = threading.Thread(target=pinned_user)
    user.start()
    user.join(timeout=30)
    assert seen and all(mask == cpus for mask in seen)
