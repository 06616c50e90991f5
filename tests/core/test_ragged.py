"""``tf.RaggedTensor``: round trips against Python lists (hypothesis), views, gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist import errors

rows_of_ints = st.lists(st.lists(st.integers(-50, 50), max_size=5), max_size=6)


def _pad(rows, width, fill=0):
    return [r + [fill] * (width - len(r)) for r in rows]


@settings(max_examples=60, deadline=None)
@given(rows_of_ints)
def test_from_row_lengths_round_trips_through_to_list(rows):
    flat = [x for r in rows for x in r]
    rt = tf.RaggedTensor.from_row_lengths(
        tf.constant(flat, tf.int32) if flat else tf.zeros([0], tf.int32),
        [len(r) for r in rows],
    )
    assert rt.to_list() == rows
    assert rt.row_splits.numpy().tolist() == np.cumsum([0] + [len(r) for r in rows]).tolist()
    assert rt.row_splits.dtype == tf.int64
    assert rt.shape.as_list() == [len(rows), None]


@settings(max_examples=60, deadline=None)
@given(rows_of_ints, st.integers(-3, 3))
def test_to_tensor_pads_as_python_does(rows, fill):
    flat = [x for r in rows for x in r]
    rt = tf.RaggedTensor.from_row_lengths(np.asarray(flat, np.int32), [len(r) for r in rows])
    width = max((len(r) for r in rows), default=0)
    dense = rt.to_tensor(default_value=fill)
    assert dense.numpy().tolist() == _pad(rows, width, fill)
    # and from_tensor with the lengths undoes it
    if rows:
        back = tf.RaggedTensor.from_tensor(dense, lengths=[len(r) for r in rows])
        assert back.to_list() == rows


@settings(max_examples=40, deadline=None)
@given(rows_of_ints, st.integers(0, 7), st.integers(0, 7))
def test_slicing_matches_python_lists(rows, a, b):
    rt = tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)
    assert rt[a:b].to_list() == rows[a:b]
    assert rt[:, a:b].to_list() == [r[a:b] for r in rows]
    assert rt[::2].to_list() == rows[::2]
    assert tf.reduce_sum(rt, axis=1).numpy().tolist() == [sum(r) for r in rows]


@settings(max_examples=40, deadline=None)
@given(st.lists(rows_of_ints, max_size=4))
def test_nested_constant_round_trips(nested):
    rt = tf.ragged.constant(nested, dtype=tf.int32, ragged_rank=2)
    assert rt.to_list() == nested
    assert rt.ragged_rank == 2
    again = tf.RaggedTensor.from_nested_row_splits(rt.flat_values, rt.nested_row_splits)
    assert again.to_list() == nested


def test_repr_and_numpy_follow_tf():
    rt = tf.ragged.constant([[1, 2], [3], []])
    assert repr(rt) == "<tf.RaggedTensor [[1, 2], [3], []]>"
    assert tf.ragged.constant([[1, 2], [3, 4]]).numpy().tolist() == [[1, 2], [3, 4]]
    assert rt.numpy().dtype == object
    assert repr(tf.ragged.constant([["a"], []])) == "<tf.RaggedTensor [[b'a'], []]>"


def test_elementwise_math_and_gradients():
    v = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(v)
        rt = tf.RaggedTensor.from_row_lengths(v, [2, 1])
        y = tf.reduce_sum(rt.to_tensor() * [[1.0, 2.0], [3.0, 4.0]]) + tf.reduce_sum(
            tf.reduce_sum(rt * rt, axis=1)
        )
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [3.0, 6.0, 9.0])
    assert (rt + 1.0).to_list() == [[2.0, 3.0], [4.0]]
    assert (2.0 * rt).to_list() == [[2.0, 4.0], [6.0]]


def test_errors_are_tfs():
    with pytest.raises(errors.InvalidArgumentError):
        tf.RaggedTensor.from_row_splits([1, 2], row_splits=[0, 1])
    with pytest.raises(errors.InvalidArgumentError):
        tf.ragged.constant([[1], [2]]) + tf.ragged.constant([[1, 2], []])
    with pytest.raises(ValueError, match="inner ragged dimension"):
        tf.ragged.constant([[1], [2]])[:, 0]
    with pytest.raises(IndexError):
        tf.ragged.constant([[1], [2]])[2]
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant([[1, [2]]])
    with pytest.raises(errors.UnimplementedError):
        tf.reduce_sum(tf.ragged.constant([[[1]]]), axis=2, keepdims=True)


def test_spec():
    rt = tf.ragged.constant([[1, 2], [3]])
    spec = tf.RaggedTensorSpec.from_value(rt)
    assert repr(spec) == "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)"
    assert spec.is_compatible_with(rt)
    assert spec == tf.RaggedTensorSpec([2, None], tf.int32, 1)
