"""dtypes: names, conversions, properties and TF's rules for Python values."""

import pickle

import numpy as np
import pytest

import simdist as tf
from simdist.core import dtypes


@pytest.mark.parametrize(
    "spelling, expected",
    [
        ("float32", tf.float32),
        ("float", tf.float32),
        ("double", tf.float64),
        ("half", tf.float16),
        (np.float64, tf.float64),
        (np.dtype("int64"), tf.int64),
        (float, tf.float32),
        (int, tf.int32),
        (bool, tf.bool),
        (np.bool_, tf.bool),
        (np.dtype("U3"), tf.string),
        (tf.uint8, tf.uint8),
    ],
)
def test_as_dtype(spelling, expected):
    assert tf.as_dtype(spelling) is expected


def test_unknown_dtype_raises_type_error():
    with pytest.raises(TypeError, match="Cannot convert"):
        tf.as_dtype("complex512")
    with pytest.raises(TypeError):
        tf.as_dtype(np.complex64)


def test_printing_and_equality():
    assert repr(tf.float32) == "tf.float32"
    assert str(tf.float32) == "<dtype: 'float32'>"
    assert tf.float32 == "float32" and tf.float32 == np.float32
    assert tf.float32 != tf.float64 and tf.float32 != None  # noqa: E711
    assert tf.float64 is tf.double and tf.float16 is tf.half
    assert len({tf.float32, tf.as_dtype("float32")}) == 1
    assert pickle.loads(pickle.dumps(tf.int64)) is tf.int64


def test_properties():
    assert tf.float32.is_floating and not tf.float32.is_integer
    assert tf.int8.is_integer and tf.uint8.is_unsigned and tf.bool.is_bool
    assert tf.float32.size == 4 and tf.int64.size == 8
    assert tf.float32.as_numpy_dtype is np.float32
    assert tf.int32.min == -(2**31) and tf.int32.max == 2**31 - 1
    assert tf.float32.max == np.finfo(np.float32).max
    assert tf.float32.base_dtype is tf.float32
    assert tf.float32.is_compatible_with("float32") and not tf.float32.is_compatible_with(tf.int32)


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, tf.int32),
        ([1, -(2**31)], tf.int32),
        ([1, 2**31], tf.int64),
        (1.0, tf.float32),
        ([1, 2.5], tf.float32),
        (True, tf.bool),
        ("s", tf.string),
    ],
)
def test_python_values_infer_tfs_dtypes(value, expected):
    assert dtypes.infer_python_dtype(value) is expected
