"""``constant`` / ``convert_to_tensor``: TF's dtype inference and conversion rules."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf


@pytest.mark.parametrize(
    "value, dtype",
    [
        (1, tf.int32),
        (2**40, tf.int64),
        (1.5, tf.float32),
        ([1, 2.0], tf.float32),
        (True, tf.bool),
        ("a", tf.string),
        ([], tf.float32),
        (np.float64(1.0), tf.float64),
        (np.array([1, 2], np.int64), tf.int64),
        (np.array([1.0], np.float16), tf.float16),
    ],
)
def test_inferred_dtypes(value, dtype):
    assert tf.constant(value).dtype == dtype
    assert tf.convert_to_tensor(value).dtype == dtype


@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32, np.int64]), (2, 2)))
def test_numpy_arrays_keep_their_dtype_and_are_copied(x):
    t = tf.constant(x)
    assert t.dtype == tf.as_dtype(x.dtype)
    before = t.numpy().copy()
    x[...] = 0
    np.testing.assert_array_equal(t.numpy(), before)


def test_requested_dtypes():
    assert tf.constant(1, dtype=tf.float32).numpy() == 1.0
    assert tf.constant(np.array([1.5]), dtype=tf.float32).dtype == tf.float32
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.constant(True, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.constant(2**40, dtype=tf.int32)


def test_tensors_are_not_cast_by_conversion():
    t = tf.constant([1, 2])
    assert tf.convert_to_tensor(t) is t
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32"):
        tf.convert_to_tensor(t, dtype=tf.float32)
    with pytest.raises(TypeError, match="Expected tensor"):
        tf.constant(t, dtype=tf.float32)


def test_dtype_hint_is_a_preference_only():
    assert tf.convert_to_tensor(1, dtype_hint=tf.float32).dtype == tf.float32
    assert tf.convert_to_tensor("a", dtype_hint=tf.float32).dtype == tf.string
    assert tf.convert_to_tensor(np.array([1]), dtype_hint=tf.float32).dtype == tf.as_dtype(
        np.array([1]).dtype
    )


def test_shape_argument():
    assert tf.constant(0, shape=[2, 3]).numpy().tolist() == [[0] * 3] * 2
    assert tf.constant([1, 2, 3, 4], shape=[2, 2]).numpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="has 3 elements"):
        tf.constant([1, 2, 3], shape=[2, 2])


def test_unsupported_and_ragged_values():
    with pytest.raises(ValueError, match="unsupported type"):
        tf.constant(None)
    with pytest.raises(ValueError, match="unsupported type"):
        tf.constant(1) + None
    with pytest.raises(ValueError, match="non-rectangular"):
        tf.constant([[1, 2], [3]])


def test_strings_are_bytes():
    assert tf.constant("héllo").numpy() == "héllo".encode()
    assert tf.constant(["a", "b"]).numpy().tolist() == [b"a", b"b"]


def test_variables_convert_through_a_read():
    v = tf.Variable([1.0, 2.0])
    t = tf.convert_to_tensor(v)
    assert tf.is_tensor(t) and not tf.is_tensor(v)
    assert t.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        tf.convert_to_tensor(v, dtype=tf.int32)


def test_lists_of_tensors_pack():
    t = tf.convert_to_tensor([tf.constant(1.0), 2.0, tf.Variable(3.0)])
    assert t.dtype == tf.float32 and t.numpy().tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor of dtype"):
        tf.convert_to_tensor([tf.constant(1.0), tf.constant(1)])


def test_an_empty_python_list_converts_to_any_dtype():
    import simdist as tf

    for dtype in (tf.int64, tf.int8, tf.bool, tf.float32):
        t = tf.constant([], dtype)
        assert t.dtype == dtype and t.shape == (0,)
    assert tf.constant([[]], tf.int32).shape == (1, 0)
