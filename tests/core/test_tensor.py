"""``Tensor``: TF's printed forms, Python protocol, immutability, refs."""

import pickle

import numpy as np
import pytest

import simdist as tf


def test_repr_is_tfs():
    assert repr(tf.constant([1, 2])) == (
        "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>"
    )
    assert repr(tf.constant(1.5)) == "<tf.Tensor: shape=(), dtype=float32, numpy=1.5>"
    assert repr(tf.constant([[1], [2]])) == (
        "<tf.Tensor: shape=(2, 1), dtype=int32, numpy=\narray([[1],\n       [2]], dtype=int32)>"
    )
    assert repr(tf.constant("ab")) == "<tf.Tensor: shape=(), dtype=string, numpy=b'ab'>"
    assert repr(tf.constant(True)) == "<tf.Tensor: shape=(), dtype=bool, numpy=True>"


def test_str_is_tfs():
    assert str(tf.constant(1.1195339)) == "tf.Tensor(1.1195339, shape=(), dtype=float32)"
    assert str(tf.constant([1, 2])) == "tf.Tensor([1 2], shape=(2,), dtype=int32)"
    assert str(tf.constant([[1, 2], [3, 4]])) == (
        "tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"
    )


def test_format_uses_the_numpy_value():
    assert "{}".format(tf.constant(0.5106383562088013)) == "0.5106383562088013"  # noqa: UP032
    assert f"{tf.constant(2.5):.2f}" == "2.50"
    assert f"{tf.constant(7)}" == "7"


def test_python_conversions():
    assert float(tf.constant(2.5)) == 2.5
    assert int(tf.constant([3])) == 3
    assert [10, 20, 30][tf.constant(1)] == 20
    with pytest.raises(TypeError):
        [1, 2][tf.constant(1.0)]
    with pytest.raises(TypeError):
        float(tf.constant([1.0, 2.0]))
    assert bool(tf.constant(1)) and not bool(tf.constant([0.0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(tf.constant([1, 2]))


def test_len_and_iteration():
    t = tf.constant([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = list(t)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError):
        len(tf.constant(1))
    with pytest.raises(TypeError):
        iter(tf.constant(1))


def test_tensors_are_immutable_and_numpy_gives_a_copy():
    t = tf.constant([1.0, 2.0])
    arr = t.numpy()
    arr[0] = 99.0
    assert t.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        np.asarray(t)[0] = 5.0
    assert isinstance(tf.constant(1.0).numpy(), np.float32)


def test_shape_dtype_device_and_ref():
    t = tf.constant([[1.0, 2.0, 3.0]])
    assert t.shape == (1, 3) and t.shape == tf.TensorShape([1, 3]) and t.ndim == 2
    assert t.dtype == tf.float32 and t.dtype == "float32"
    assert t.device.endswith("device:CPU:0")
    refs = {t.ref(): "a"}
    assert refs[t.ref()] == "a" and t.ref().deref() is t
    assert t.ref() != tf.constant([[1.0, 2.0, 3.0]]).ref()
    with pytest.raises(TypeError, match="unhashable"):
        {t}  # noqa: B018


def test_pickle_round_trip():
    t = tf.constant([1, 2], tf.int64)
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype == tf.int64 and back.numpy().tolist() == [1, 2]


def test_unary_operators():
    t = tf.constant([1.0, -2.0])
    assert (-t).numpy().tolist() == [-1.0, 2.0]
    assert (+t) is t
    assert abs(t).numpy().tolist() == [1.0, 2.0]
    assert (~tf.constant([True])).numpy().tolist() == [False]
