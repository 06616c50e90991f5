"""py_function and numpy_function: results, Tout, exceptions mapped as TF's kernel maps them."""

import numpy as np
import pytest

import simdist as tf


def test_py_function_converts_to_tout_and_keeps_gradients():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a * a, [x], Tout=tf.float32)
    assert float(tape.gradient(y, x)) == 6.0
    pair = tf.py_function(lambda a: (a, 1), [x], Tout=[tf.float32, tf.int64])
    assert [t.dtype for t in pair] == [tf.float32, tf.int64]


@pytest.mark.parametrize(
    ("raised", "error"),
    [
        (ValueError("v"), tf.errors.InvalidArgumentError),
        (TypeError("t"), tf.errors.InvalidArgumentError),
        (StopIteration(), tf.errors.OutOfRangeError),
        (NotImplementedError("n"), tf.errors.UnimplementedError),
        (KeyError("k"), tf.errors.UnknownError),
        (tf.errors.NotFoundError("f"), tf.errors.NotFoundError),
    ],
)
def test_py_function_maps_exceptions(raised, error):
    def fail(a):
        raise raised

    with pytest.raises(error) as info:
        tf.py_function(fail, [1.0], Tout=tf.float32)
    assert info.value is raised or info.value.__cause__ is raised


def test_numpy_function_eager_and_in_function():
    got = tf.numpy_function(lambda a: a.astype(np.float64), [tf.constant([1.0])], Tout=tf.float32)
    assert got.dtype == tf.float64  # eager: as returned, as TF's eager numpy_function

    @tf.function
    def traced(v):
        return tf.numpy_function(lambda a: a.astype(np.float64), [v], Tout=tf.float32)

    assert traced(tf.constant([1.0])).dtype == tf.float32  # a graph op's Tout
    with pytest.raises(TypeError, match="Tout"):
        tf.numpy_function(lambda a: a, [1.0])
