"""Bad input to tensor ops: TF's error class and a message that says what to fix (issue 18)."""

import numpy as np
import pytest

import simdist as tf

X = tf.constant([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("op", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_prod])
def test_duplicate_reduction_axis_is_refused(op):
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicate dimension: 0"):
        op(X, axis=[0, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicate dimension: 1"):
        op(X, axis=[1, -1])


def test_string_reduction_axis_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis must be an int"):
        tf.reduce_sum(X, axis="0")


@pytest.mark.parametrize("make", [tf.ones, tf.zeros])
def test_non_integer_shape_is_a_type_error(make):
    with pytest.raises(TypeError, match="must be an integer"):
        make([2.5])
    with pytest.raises(TypeError, match="must be an integer"):
        make([2, True])
    assert make([2, np.int64(3)]).shape == (2, 3)
    assert make([tf.constant(2), 3]).shape == (2, 3)


def test_fill_with_non_integer_dims_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be an integer"):
        tf.fill([2.5], 1.0)


def test_cast_to_none_is_a_type_error():
    with pytest.raises(TypeError, match="Cannot convert None"):
        tf.cast(X, None)
    with pytest.raises(TypeError, match="Cannot convert None"):
        tf.as_dtype(None)


@pytest.mark.parametrize("convert", [tf.constant, tf.convert_to_tensor])
def test_object_array_converts_only_when_it_holds_strings(convert):
    with pytest.raises(ValueError, match="Unsupported object type int"):
        convert(np.array([1, "a", None], dtype=object))
    with pytest.raises(ValueError, match="Unsupported object type float"):
        convert(np.array([1.0, 2.0], dtype=object))
    out = convert(np.array(["a", b"b"], dtype=object))
    assert out.dtype == tf.string and out.numpy().tolist() == [b"a", b"b"]


def test_clip_by_value_with_min_above_max_gives_min_as_tf():
    out = tf.clip_by_value(tf.constant([1.0, 5.0, 9.0]), 6, 4)
    np.testing.assert_array_equal(out.numpy(), [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(
        tf.clip_by_value(tf.constant([1.0, 5.0, 9.0]), 2, 6).numpy(), [2.0, 5.0, 6.0]
    )


def test_concat_of_nothing_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least one tensor"):
        tf.concat([], 0)


def test_negative_tile_multiple_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"multiples\[0\] >= 0"):
        tf.tile(X, [-1, 1])
    assert tf.tile(X, [0, 2]).shape == (0, 4)
