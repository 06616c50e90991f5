"""``tf.config.threading``, ``tf.config.optimizer`` and ``tf.autograph`` before and after the
runtime starts (checked against TF 2.21 in the ``config.threading_optimizer_autograph``
snippet, where TF's runtime has already started)."""

from __future__ import annotations

import pytest

import simdist as tf
from simdist.core import intra_op
from simdist.testing.runtime import fresh_runtime


@pytest.fixture
def restore_threads():
    before = intra_op.intra_op_threads()
    yield
    intra_op.set_intra_op_threads(before)
    from simdist.config import threading as config_threading

    config_threading._set.update(intra=0, inter=0)


def test_intra_op_threads_set_before_the_runtime_starts_drive_simdists_intra_op_threads(
    restore_threads,
):
    t = tf.config.threading
    with fresh_runtime():
        t.set_intra_op_parallelism_threads(1)
        t.set_inter_op_parallelism_threads(4)
        assert intra_op.intra_op_threads() == 1
        assert (t.get_intra_op_parallelism_threads(), t.get_inter_op_parallelism_threads()) == (
            1,
            4,
        )
        t.set_intra_op_parallelism_threads(0)  # the default again
        assert intra_op.intra_op_threads() == intra_op.intra_op_threads_from_environment()
        tf.constant(1.0)  # the runtime starts
        with pytest.raises(RuntimeError, match="cannot be modified after initialization"):
            t.set_intra_op_parallelism_threads(2)


@pytest.mark.parametrize(
    "bad, error", [(-1, ValueError), (1.5, TypeError), ("2", TypeError), (True, TypeError)]
)
def test_bad_thread_counts_are_refused(bad, error, restore_threads):
    with fresh_runtime(), pytest.raises(error):
        tf.config.threading.set_intra_op_parallelism_threads(bad)


def test_jit_and_grappler_options_are_recorded_and_read_back():
    o = tf.config.optimizer
    try:
        o.set_jit(True)
        assert o.get_jit() == "autoclustering"
        with pytest.raises(ValueError, match="set_jit takes"):
            o.set_jit("xla")
        o.set_experimental_options({"layout_optimizer": False})
        assert o.get_experimental_options()["layout_optimizer"] is False
        assert o.get_experimental_options()["disable_meta_optimizer"] is False
    finally:
        o.set_jit(False)
        o.set_experimental_options({"layout_optimizer": True})


def test_autograph_converts_nothing_and_refuses_to_graph():
    fn = tf.autograph.experimental.do_not_convert(lambda x: x + 1)
    assert fn(1) == 2 and tf.autograph.experimental.do_not_convert()(fn) is fn
    with pytest.raises(NotImplementedError, match="no graphs"):
        tf.autograph.to_graph(fn)
