"""serialize_tensor / parse_tensor round trips and decode_raw without TensorFlow (the bytes
are compared with TF's in tests/data/test_tfrecord_vs_tf.py)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from simdist import errors
from simdist.summary import event_file


@given(
    hnp.arrays(
        st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.int8, np.int16, np.uint8,
                         np.bool_, np.float16]),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    )
)  # fmt: skip
def test_round_trip(array):
    value = tf.constant(array)
    data = tf.io.serialize_tensor(value)
    assert data.dtype == tf.string and data.shape == []
    back = tf.io.parse_tensor(data, value.dtype)
    assert back.dtype == value.dtype
    np.testing.assert_array_equal(back.numpy(), array)


def test_strings_and_known_bytes():
    data = tf.io.serialize_tensor(tf.constant([b"ab", b""]))
    assert data.numpy() == b"\x08\x07\x12\x04\x12\x02\x08\x02B\x02abB\x00"
    assert tf.io.parse_tensor(data, tf.string).numpy().tolist() == [b"ab", b""]
    scalar = tf.io.serialize_tensor(tf.constant(1.5))
    assert scalar.numpy() == b"\x08\x01\x12\x00\"\x04\x00\x00\xc0?"
    assert event_file.tensor_proto(np.float32(1.5)) == scalar.numpy()


def test_parse_errors():
    data = tf.io.serialize_tensor(tf.constant(1.5))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Type mismatch between parsed tensor \(float\) and dtype \(double\)"):
        tf.io.parse_tensor(data, tf.float64)  # fmt: skip
    with pytest.raises(errors.InvalidArgumentError):
        tf.io.parse_tensor(b"\xff\xff", tf.float32)
    # typed value fields, a last value repeated to fill the shape
    assert tf.io.parse_tensor(b"\x08\x03\x12\x04\x12\x02\x08\x03\x3a\x01\x07",
                              tf.int32).numpy().tolist() == [7, 7, 7]  # fmt: skip


def test_decode_raw():
    assert tf.io.decode_raw(b"\x01\x00\x02\x00", tf.int16).numpy().tolist() == [1, 2]
    big = tf.io.decode_raw(b"\x01\x00\x02\x00", tf.int16, little_endian=False)
    assert big.numpy().tolist() == [256, 512]
    matrix = tf.io.decode_raw([[b"\x01\x00\x00\x00"], [b"\x02\x00\x00\x00"]], tf.int32)
    assert matrix.shape == [2, 1, 1]
    fixed = tf.io.decode_raw([b"\x01\x00\x02", b"\x03"], tf.int16, fixed_length=4)
    assert fixed.numpy().tolist() == [[1, 2], [3, 0]]
    with pytest.raises(errors.InvalidArgumentError, match="same size"):
        tf.io.decode_raw([b"\x01\x00", b"\x02"], tf.uint8)
    with pytest.raises(errors.InvalidArgumentError, match="not a multiple of 2"):
        tf.io.decode_raw(b"\x01\x00\x02", tf.int16)
