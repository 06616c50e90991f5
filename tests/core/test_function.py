"""tf.function: eager semantics kept, 'inside a function' marked, input_signature enforced."""

import pytest

import simdist as tf


def test_decorated_function_runs_eagerly_and_marks_inside():
    seen = []

    @tf.function
    def f(x):
        seen.append(tf.executing_eagerly())
        return x * 2

    assert tf.executing_eagerly()
    assert float(f(tf.constant(3.0))) == 6.0
    assert seen == [False]
    assert tf.executing_eagerly()


def test_decorator_with_arguments_and_methods():
    class Model:
        def __init__(self):
            self.k = 3.0

        @tf.function(input_signature=[tf.TensorSpec(shape=(None,), dtype=tf.float32)])
        def scale(self, x):
            return x * self.k

    out = Model().scale(tf.constant([1.0, 2.0]))
    assert out.numpy().tolist() == [3.0, 6.0]


def test_input_signature_rejects_wrong_dtype_and_shape():
    @tf.function(input_signature=[tf.TensorSpec(shape=(None, 2), dtype=tf.float32)])
    def f(x):
        return x

    f(tf.constant([[1.0, 2.0]]))
    with pytest.raises(TypeError, match="incompatible with input_signature"):
        f(tf.constant([[1, 2]]))
    with pytest.raises(ValueError, match="incompatible with input_signature"):
        f(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="positional argument"):
        f(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 2.0]]))


def test_tracing_count_follows_tf_retracing_rules():
    @tf.function
    def f(x, flag):
        return x

    f(tf.constant([1.0]), True)
    f(tf.constant([2.0]), True)  # same shape/dtype and Python value: no retrace
    assert f.experimental_get_tracing_count() == 1
    f(tf.constant([1.0, 2.0]), True)  # new shape
    f(tf.constant([1.0]), False)  # new Python value
    assert f.experimental_get_tracing_count() == 3


def test_run_functions_eagerly_makes_calls_eager():
    @tf.function
    def f():
        return tf.executing_eagerly()

    tf.config.run_functions_eagerly(True)
    try:
        assert f() is True  # run eagerly: the plain Python value, as TF
    finally:
        tf.config.run_functions_eagerly(False)
    out = f()  # as a function: Python values come back as tensors, as from a graph
    assert isinstance(out, tf.Tensor) and out.dtype == tf.bool and not bool(out)


def test_exception_inside_restores_eager_state():
    @tf.function
    def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        boom()
    assert tf.executing_eagerly()


def test_numbers_returned_from_a_function_become_tensors():
    @tf.function
    def f():
        return 4, {"x": 1.5}, None, tf.constant([1, 2])

    four, d, none, t = f()
    assert repr(four) == "<tf.Tensor: shape=(), dtype=int32, numpy=4>"
    assert d["x"].dtype == tf.float32 and none is None and t.shape == (2,)
