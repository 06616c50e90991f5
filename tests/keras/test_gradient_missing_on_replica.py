"""A gradient that is None on some replicas only is an error naming the variable and replicas.

TensorFlow (eager ``MirroredStrategy``) fails there with a bare ``AssertionError`` from
``regroup`` that names neither; simdist's error is a ``ValueError`` and an ``AssertionError``.
"""

import warnings

import numpy as np
import pytest

import simdist as tf


def _strategy(n=2):
    return tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(n)])


def _branching_step(a, b, opt, skip_on):
    def step():
        rid = int(tf.distribute.get_replica_context().replica_id_in_sync_group)
        with tf.GradientTape() as tape:
            loss = a * 3.0 if rid in skip_on else a * 3.0 + b * 2.0
        grads = tape.gradient(loss, [a, b])
        opt.apply_gradients(zip(grads, [a, b], strict=True))
        return loss

    return step


@pytest.mark.parametrize(
    ("replicas", "skip_on", "named"), [(2, {0}, "replica 0"), (4, {1, 3}, "replicas 1, 3")]
)
def test_apply_gradients_names_the_variable_and_the_replicas(replicas, skip_on, named):
    strategy = _strategy(replicas)
    with strategy.scope():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        opt = tf.keras.optimizers.SGD(0.1)
    with pytest.raises(ValueError, match="variable 'b:0' is None on " + named) as info:
        strategy.run(_branching_step(a, b, opt, skip_on))
    assert isinstance(info.value, AssertionError)  # TF's class in eager mode
    assert "zeros_like" in str(info.value)
    # nothing was updated: the error comes before any variable is touched
    assert float(a.numpy()) == 1.0 and float(b.numpy()) == 2.0


def test_none_on_every_replica_still_warns_and_skips_the_variable():
    strategy = _strategy(2)
    with strategy.scope():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        opt = tf.keras.optimizers.SGD(0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        strategy.run(_branching_step(a, b, opt, skip_on={0, 1}))
    assert any(
        "Gradients do not exist" in str(w.message) and "b:0" in str(w.message) for w in caught
    )
    np.testing.assert_allclose(a.numpy(), 1.0 - 0.1 * 6.0, rtol=1e-6)  # 3 + 3 summed
    assert float(b.numpy()) == 2.0


def test_all_reduce_of_a_none_names_the_replica_and_position():
    strategy = _strategy(2)
    with strategy.scope():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")

    def step():
        ctx = tf.distribute.get_replica_context()
        rid = int(ctx.replica_id_in_sync_group)
        with tf.GradientTape() as tape:
            loss = a * 3.0 if rid == 1 else a * 3.0 + b * 2.0
        return ctx.all_reduce("sum", tape.gradient(loss, [a, b]))

    with pytest.raises(ValueError, match=r"all_reduce on replica 1 .* None at position 1"):
        strategy.run(step)


def test_the_suggested_fix_zeros_like_trains():
    strategy = _strategy(2)
    with strategy.scope():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        opt = tf.keras.optimizers.SGD(0.1)

    def step():
        rid = int(tf.distribute.get_replica_context().replica_id_in_sync_group)
        with tf.GradientTape() as tape:
            loss = a * 3.0 if rid == 0 else a * 3.0 + b * 2.0
        grads = tape.gradient(loss, [a, b])
        grads = [
            g if g is not None else tf.zeros_like(v) for g, v in zip(grads, [a, b], strict=True)
        ]
        opt.apply_gradients(zip(grads, [a, b], strict=True))

    strategy.run(step)
    np.testing.assert_allclose([a.numpy(), b.numpy()], [1.0 - 0.6, 2.0 - 0.2], rtol=1e-6)
