"""``GradientTape``: watching, persistence, structures, unconnected sources, stop_gradient."""

import numpy as np
import pytest

import simdist as tf


def test_non_persistent_tape_allows_one_gradient_call():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert float(tape.gradient(y, x)) == 6.0
    with pytest.raises(RuntimeError, match="persistent"):
        tape.gradient(y, x)


def test_persistent_tape_allows_many():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(z, x)) == 108.0
    assert float(tape.gradient(z, y)) == 18.0


def test_constants_are_not_watched_unless_asked():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_trainable_variables_are_watched_on_read():
    v = tf.Variable(2.0)
    frozen = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        y = v * frozen
    assert tape.watched_variables() == (v,)
    gv, gf = tape.gradient(y, [v, frozen])
    assert float(gv) == 5.0 and gf is None


def test_watch_accessed_variables_false():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a * b
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 3.0 and gb is None


def test_stop_gradient_and_stop_recording():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * tf.stop_gradient(x)
        with tape.stop_recording():
            z = x * x
        w = y + z
    assert float(tape.gradient(y, x)) == 2.0
    assert tape.gradient(z, x) is None
    assert float(tape.gradient(w, x)) == 2.0


def test_unconnected_gradients():
    x, unused = tf.constant(1.0), tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, unused])
        y = x * 2.0
    assert tape.gradient(y, unused) is None
    zero = tape.gradient(y, unused, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert zero.numpy().tolist() == [0.0, 0.0]
    assert tape.gradient(y, unused, unconnected_gradients="zero").shape == (2,)


def test_nested_targets_and_sources():
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        targets = {"p": a * b, "q": [a * a, b]}
    grads = tape.gradient(targets, {"first": a, "rest": (b,)})
    assert set(grads) == {"first", "rest"} and isinstance(grads["rest"], tuple)
    assert float(grads["first"]) == 2.0 + 2.0  # b + 2a
    assert float(grads["rest"][0]) == 1.0 + 1.0  # a + 1


def test_integer_sources_get_none():
    i = tf.constant(3)
    with tf.GradientTape() as tape:
        tape.watch(i)
        y = tf.cast(i, tf.float32) * 2.0
    assert tape.gradient(y, i) is None


def test_output_gradients_weight_the_targets():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=tf.constant([10.0, 100.0]))
    assert g.numpy().tolist() == [20.0, 400.0]


def test_variable_read_twice_accumulates():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        a = v * 2.0
        b = v * v
        y = a + b
    assert float(tape.gradient(y, v)) == 2.0 + 6.0


def test_same_tensor_used_many_times_accumulates():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x * x + x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 3 * np.array([1.0, 4.0]) + 1)


def test_gradient_of_a_source_itself_is_ones():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
    assert tape.gradient(x, x).numpy().tolist() == [1.0, 1.0]


def test_higher_order_gradients_raise_unimplemented():
    x = tf.Variable(3.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x * x * x
        dy = inner.gradient(y, x)
    assert float(dy) == 27.0
    with pytest.raises(tf.errors.UnimplementedError, match="higher-order"):
        outer.gradient(dy, x)


def test_gradient_dtype_follows_the_source():
    x = tf.constant([1.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    assert tape.gradient(y, x).dtype == tf.float64


def test_sources_must_be_tensors_or_variables():
    with tf.GradientTape() as tape:
        y = tf.constant(1.0)
    with pytest.raises(ValueError):
        tape.gradient(y, [1.0])


def test_reset_forgets_recorded_ops():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        total = y + x * 3.0
    assert float(tape.gradient(total, x)) == 3.0  # the x * x before reset is forgotten
