"""The lockstep replica runner: deterministic, and loud (never hanging) when replicas diverge."""

import threading

import numpy as np
import pytest

import simdist as tf
from simdist.distribute.values import PerReplica


@pytest.fixture
def strategy():
    return tf.distribute.MirroredStrategy(["GPU:0", "GPU:1", "GPU:2"])


def test_each_replica_runs_on_its_device_in_its_context(strategy):
    def fn():
        ctx = tf.distribute.get_replica_context()
        return tf.constant(0).device, int(ctx.replica_id_in_sync_group), ctx.num_replicas_in_sync

    devices, ids, count = strategy.run(fn)
    assert devices.values == tuple(strategy.extended.worker_devices)
    assert ids.values == (0, 1, 2) and count == 3


def test_replicas_take_turns_so_shared_python_state_is_deterministic(strategy):
    order = []

    def fn():
        rid = int(tf.distribute.get_replica_context().replica_id_in_sync_group)
        order.append((rid, "before", threading.current_thread().name))
        tf.distribute.get_replica_context().all_reduce("sum", tf.constant(1.0))
        order.append((rid, "after"))
        return rid

    strategy.run(fn)
    assert [o[:2] for o in order] == [
        (0, "before"),
        (1, "before"),
        (2, "before"),
        (0, "after"),
        (1, "after"),
        (2, "after"),
    ]


def test_all_reduce_and_all_gather_in_replica_order(strategy):
    def fn(x):
        ctx = tf.distribute.get_replica_context()
        return ctx.all_reduce(tf.distribute.ReduceOp.SUM, x), ctx.all_gather(x, axis=0)

    x = PerReplica([tf.constant([1.0, 2.0]) * (i + 1) for i in range(3)])
    total, gathered = strategy.run(fn, args=(x,))
    for t in total.values:
        np.testing.assert_array_equal(t.numpy(), [6.0, 12.0])
    for g in gathered.values:
        np.testing.assert_array_equal(g.numpy(), [1, 2, 2, 4, 3, 6])


def test_gradient_flows_through_all_reduce(strategy):
    def fn(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.distribute.get_replica_context().all_reduce("sum", x * x)
        return tape.gradient(y, x)

    x = PerReplica([tf.constant(float(i + 1)) for i in range(3)])
    grads = strategy.run(fn, args=(x,))
    # d/dx_r of sum over replicas of (sum_s x_s^2) is 2 x_r summed over the 3 replicas' losses
    assert [float(g) for g in grads.values] == [6.0, 12.0, 18.0]


def test_replica_exception_names_the_replica(strategy):
    def fn():
        if int(tf.distribute.get_replica_context().replica_id_in_sync_group) == 1:
            raise KeyError("boom")
        return 1

    with pytest.raises(KeyError) as info:
        strategy.run(fn)
    assert info.value.replica_id == 1


def test_replica_that_returns_while_others_wait_is_an_error_not_a_hang(strategy):
    def fn():
        ctx = tf.distribute.get_replica_context()
        if int(ctx.replica_id_in_sync_group) != 2:
            ctx.all_reduce("sum", tf.constant(1.0))
        return 0

    with pytest.raises(tf.distribute.CollectiveMismatchError) as info:
        strategy.run(fn)
    message = str(info.value)
    assert "Replica(s) [2] returned" in message and "replica 0: all_reduce" in message
    assert "replica 2: (none)" in message


def test_different_collectives_are_an_error(strategy):
    def fn():
        ctx = tf.distribute.get_replica_context()
        if int(ctx.replica_id_in_sync_group) == 1:
            return ctx.all_gather(tf.constant([1.0]), axis=0)
        return ctx.all_reduce("sum", tf.constant([1.0]))

    with pytest.raises(tf.distribute.CollectiveMismatchError, match="replica 1 is in all_gather"):
        strategy.run(fn)


def test_mismatched_shapes_in_all_reduce_are_an_error(strategy):
    def fn():
        rid = int(tf.distribute.get_replica_context().replica_id_in_sync_group)
        return tf.distribute.get_replica_context().all_reduce("sum", tf.zeros([rid + 1]))

    with pytest.raises(tf.distribute.CollectiveMismatchError, match="shape"):
        strategy.run(fn)


def test_the_strategy_still_works_after_a_failed_run(strategy):
    with pytest.raises(ValueError):
        strategy.run(lambda: (_ for _ in ()).throw(ValueError("x")))
    assert strategy.run(lambda: 3) == 3


def test_nested_run_is_refused(strategy):
    with pytest.raises(RuntimeError, match="nested"):
        strategy.run(lambda: strategy.run(lambda: 1))


def test_merge_call_runs_once_with_per_replica_args(strategy):
    calls = []

    def merge_fn(s, value):
        calls.append(value)
        return s.reduce("SUM", value, axis=None)

    def fn():
        ctx = tf.distribute.get_replica_context()
        return ctx.merge_call(merge_fn, args=(ctx.replica_id_in_sync_group,))

    out = strategy.run(fn)
    assert len(calls) == 1 and [int(v) for v in calls[0].values] == [0, 1, 2]
    assert int(out) == 3


def test_replicas_draw_different_but_reproducible_random_numbers(strategy):
    def fn():
        return tf.random.uniform([2])

    tf.random.set_seed(7)
    first = [v.numpy() for v in strategy.run(fn).values]
    tf.random.set_seed(7)
    again = [v.numpy() for v in strategy.run(fn).values]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])


def test_a_replica_stuck_outside_any_collective_hits_the_deadline(strategy, simdist_env):
    import time

    simdist_env("SIMDIST_REPLICA_TIMEOUT", "0.5")
    release = threading.Event()

    def fn():
        if int(tf.distribute.get_replica_context().replica_id_in_sync_group) == 1:
            release.wait(30)  # blocked on something that is not a collective
        return 0

    start = time.perf_counter()
    try:
        with pytest.raises(tf.errors.DeadlineExceededError, match="Replica 1 neither reached"):
            strategy.run(fn)
    finally:
        release.set()
    assert time.perf_counter() - start < 5  # the deadline, not the stuck replica, decides
