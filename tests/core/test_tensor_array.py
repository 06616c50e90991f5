"""TensorArray: TF's eager rules (size, dtype, shape, clear_after_read), a list model, gradients."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients

WRITES = st.lists(st.tuples(st.integers(0, 5), st.floats(-5, 5, width=32)), max_size=8)


@given(writes=WRITES)
def test_dynamic_array_matches_a_list_model(writes):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    model: list = []
    for index, value in writes:
        ta = ta.write(index, value)
        model.extend([0.0] * (index + 1 - len(model)))
        model[index] = value
    assert int(ta.size()) == len(model)
    np.testing.assert_array_equal(ta.stack().numpy(), np.asarray(model, np.float32))
    for i, v in enumerate(model):
        assert float(ta.read(i)) == np.float32(v)


def test_static_array_rules_as_tf():
    ta = tf.TensorArray(tf.float32, size=2)
    assert ta.write(0, 1.0) is ta  # eager: write returns the array itself
    ta.write(1, 2)  # a Python int becomes float32
    assert ta.element_shape == [] and ta.dtype == tf.float32 and not ta.dynamic_size
    with pytest.raises(tf.errors.OutOfRangeError, match="not resizeable and size is: 2"):
        ta.write(5, 1.0)
    with pytest.raises(tf.errors.OutOfRangeError, match="negative indices"):
        ta.write(-1, 1.0)
    with pytest.raises(tf.errors.OutOfRangeError, match="array size is: 2"):
        ta.read(5)
    assert float(ta.read(1)) == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="clear_after_read"):
        ta.read(1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype is int32"):
        tf.TensorArray(tf.int32, size=1).write(0, 1.5)
    with pytest.raises(ValueError, match="Incompatible shape"):
        tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0]).write(1, [3.0])
    with pytest.raises(ValueError, match="Incompatible shape"):
        tf.TensorArray(tf.float32, size=1, element_shape=[2]).write(0, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="Size must be declared"):
        tf.TensorArray(tf.float32, dynamic_size=True)
    with pytest.raises(ValueError, match="partially known TensorShape"):
        tf.TensorArray(tf.float32, size=2).stack()


def test_unwritten_entries_unstack_concat_gather():
    assert tf.TensorArray(tf.float32, size=2).write(0, [1.0, 2.0]).stack().numpy().tolist() == [
        [1.0, 2.0], [0.0, 0.0]]
    assert tf.TensorArray(tf.float32, size=0).stack().shape == [0]
    assert tf.TensorArray(tf.float32, size=0, element_shape=[3]).stack().shape == [0, 3]
    ta = tf.TensorArray(tf.float32, size=3).unstack([1.0, 2.0, 3.0])
    assert float(ta.read(2)) == 3.0
    with pytest.raises(ValueError, match="static size 2"):
        tf.TensorArray(tf.float32, size=2).unstack([1.0, 2.0, 3.0])
    mixed = tf.TensorArray(tf.float32, size=2, infer_shape=False)
    mixed.write(0, [1.0, 2.0]).write(1, [3.0])
    assert mixed.concat().numpy().tolist() == [1.0, 2.0, 3.0]
    g = tf.TensorArray(tf.int32, size=3, clear_after_read=False).unstack([4, 5, 6])
    assert g.gather([2, 0]).numpy().tolist() == [6, 4]
    with pytest.raises(tf.errors.InvalidArgumentError, match="scalar shape at index 0"):
        g.concat()


def test_gradients_flow_through_write_stack_and_read():
    def fn(x):
        ta = tf.TensorArray(tf.float64, size=3)
        for i in range(3):
            ta = ta.write(i, x[i] * float(i + 1))
        return ta.stack() + ta.read(0)

    check_gradients(fn, np.array([0.5, -1.0, 2.0]))

    def loop(x):
        ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True)
        _, ta, _ = tf.while_loop(lambda i, ta, y: i < 3,
                                 lambda i, ta, y: (i + 1, ta.write(i, y), y * x), (0, ta, x))
        return ta.stack()

    check_gradients(loop, np.array([1.5, 0.5]))


def test_inside_tf_function_entries_are_not_cleared_as_in_tfs_graph_tensor_array():
    @tf.function
    def fibonacci(n):  # TF's TensorArray docstring example: reads each entry twice
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        ta = ta.unstack([0.0, 1.0])
        for i in range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()

    assert fibonacci(7).numpy().tolist() == [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0]
    eager = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
    eager.read(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="clear_after_read"):
        eager.read(0)
