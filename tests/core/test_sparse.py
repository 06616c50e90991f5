"""tf.sparse.SparseTensor, to_dense and from_dense."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis.extra import numpy as hnp

import simdist as tf
from simdist import errors


def test_parts_and_repr():
    sp = tf.sparse.SparseTensor(indices=[[0, 1], [2, 0]], values=[7, 8], dense_shape=[3, 2])
    assert sp.indices.dtype == tf.int64 and sp.dense_shape.dtype == tf.int64
    assert sp.dtype == tf.int32 and sp.shape == [3, 2]
    assert tf.SparseTensor is tf.sparse.SparseTensor
    assert repr(sp).startswith("SparseTensor(indices=tf.Tensor(")
    assert tf.sparse.to_dense(sp).numpy().tolist() == [[0, 7], [0, 0], [8, 0]]
    assert tf.sparse.to_dense(sp, default_value=-1).numpy().tolist() == [[-1, 7], [-1, -1], [8, -1]]


def test_bad_parts():
    with pytest.raises(ValueError):
        tf.sparse.SparseTensor(indices=[[0]], values=[1, 2], dense_shape=[3])
    with pytest.raises(ValueError):
        tf.sparse.SparseTensor(indices=[[0]], values=[1], dense_shape=[3, 1])
    out_of_bounds = tf.sparse.SparseTensor(indices=[[3]], values=[1], dense_shape=[3])
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        tf.sparse.to_dense(out_of_bounds)
    repeated = tf.sparse.SparseTensor(indices=[[1], [1]], values=[1, 2], dense_shape=[3])
    with pytest.raises(errors.InvalidArgumentError, match="is repeated"):
        tf.sparse.to_dense(repeated)
    unordered = tf.sparse.SparseTensor(indices=[[2], [1]], values=[1, 2], dense_shape=[3])
    with pytest.raises(errors.InvalidArgumentError, match="out of order"):
        tf.sparse.to_dense(unordered)


def test_strings():
    dense = tf.constant([[b"", b"a"], [b"b", b""]])
    sp = tf.sparse.from_dense(dense)
    assert sp.values.numpy().tolist() == [b"a", b"b"]
    assert tf.sparse.to_dense(sp).numpy().tolist() == [[b"", b"a"], [b"b", b""]]


@given(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                  elements={"min_value": -2, "max_value": 2}))  # fmt: skip
def test_from_dense_then_to_dense_is_identity(array):
    sp = tf.sparse.from_dense(tf.constant(array))
    assert sp.dense_shape.numpy().tolist() == list(array.shape)
    np.testing.assert_array_equal(tf.sparse.to_dense(sp).numpy(), array)
