"""Pooled replica threads: each run starts with fresh thread-local state, as a new thread."""

import contextvars
import threading

import simdist as tf
from simdist.core.context import state
from simdist.distribute import runner as runner_lib

_VAR = contextvars.ContextVar("simdist_test_var", default="fresh")


def test_a_run_does_not_see_what_an_earlier_run_left_in_thread_locals():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])

    def leave_state():
        tape = tf.GradientTape()
        tape.__enter__()  # never exited: a new thread would not see it
        state.device_stack.append("/job:localhost/replica:0/task:0/device:CPU:0")
        state.leftover = True
        _VAR.set("stale")
        return 1

    def look():
        return (len(state.tapes), hasattr(state, "leftover"), _VAR.get(), tf.constant(0).device)

    strategy.run(leave_state)
    per_replica = strategy.experimental_local_results(strategy.run(look))
    assert [r[:3] for r in per_replica] == [(0, False, "fresh")] * 2
    assert [r[3] for r in per_replica] == list(strategy.extended.worker_devices)


def test_threads_are_reused_across_runs():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1", "GPU:2"])

    def ident():
        return threading.get_ident()

    first = set(strategy.run(ident).values)
    for _ in range(3):
        assert set(strategy.run(ident).values) == first
    assert len(first) == 3


def test_a_failed_run_leaves_the_pool_usable():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])

    def fail_on_one():
        ctx = tf.distribute.get_replica_context()
        if int(ctx.replica_id_in_sync_group) == 1:
            raise KeyError("boom")
        return ctx.all_reduce("sum", tf.constant(1.0))

    for _ in range(2):
        try:
            strategy.run(fail_on_one)
        except KeyError:
            pass
        else:  # pragma: no cover - the run must fail
            raise AssertionError("expected KeyError")
    out = strategy.run(lambda: tf.distribute.get_replica_context().all_reduce("sum", 2.0))
    assert [float(v) for v in out.values] == [4.0, 4.0]
    assert len(runner_lib._PooledThread._idle) >= 2  # both threads went back to the pool


def test_every_thread_local_of_simdist_is_reset_by_the_pool():
    """A pooled replica thread must start each run with fresh thread-local state: every
    ``threading.local`` simdist defines has to be in the runner's reset list."""
    import importlib
    import pathlib
    import pkgutil
    import threading

    import simdist
    from simdist.distribute import runner

    listed = {(m, a) for m, a in runner._THREAD_LOCALS}
    found = set()
    root = pathlib.Path(simdist.__file__).parent
    for info in pkgutil.walk_packages([str(root)], prefix="simdist."):
        if info.name.endswith("backends.mpi"):
            continue  # imports mpi4py lazily; it defines no thread-locals
        module = importlib.import_module(info.name)
        for attr, value in vars(module).items():
            if isinstance(value, threading.local) and getattr(value, "__module__", None) in (
                None,
                info.name,
                "_thread",
                "threading",
            ):
                found.add((info.name, attr))
    assert found <= listed, f"add these to runner._THREAD_LOCALS: {sorted(found - listed)}"
