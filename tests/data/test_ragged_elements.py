"""Ragged dataset elements: slices, map results, batch, unbatch and ragged_batch against
Python lists (hypothesis), with TF's specs."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf

rows_of_ints = st.lists(st.lists(st.integers(0, 9), max_size=4), min_size=1, max_size=7)


@settings(max_examples=40, deadline=None)
@given(rows_of_ints, st.integers(1, 4), st.booleans())
def test_slices_then_batch_regroup_the_rows(rows, size, drop):
    rt = tf.ragged.constant(rows, dtype=tf.int64, ragged_rank=1)
    ds = tf.data.Dataset.from_tensor_slices(rt)
    assert [e.numpy().tolist() for e in ds] == rows
    batches = [b.to_list() for b in ds.batch(size, drop_remainder=drop)]
    expected = [rows[i : i + size] for i in range(0, len(rows), size)]
    if drop:
        expected = [b for b in expected if len(b) == size]
    assert batches == expected
    unbatched = [e.numpy().tolist() for e in ds.batch(size).unbatch()]
    assert unbatched == rows


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=7), st.integers(1, 3))
def test_ragged_batch_of_dense_elements_of_different_lengths(lengths, size):
    ds = tf.data.Dataset.from_tensor_slices(lengths).map(lambda n: tf.range(n))
    batches = [b.to_list() for b in ds.ragged_batch(size)]
    rows = [list(range(n)) for n in lengths]
    assert batches == [rows[i : i + size] for i in range(0, len(rows), size)]


def test_specs_are_tfs():
    rt = tf.ragged.constant([[1, 2], [3]])
    ds = tf.data.Dataset.from_tensor_slices(rt)
    assert repr(ds.element_spec) == "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    assert repr(ds.batch(2, drop_remainder=True).element_spec) == (
        "RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)"
    )
    words = tf.data.Dataset.from_tensor_slices(["a b", "c"]).batch(2).map(tf.strings.split)
    assert isinstance(next(iter(words)), tf.RaggedTensor)
    assert repr(tf.data.Dataset.range(3).ragged_batch(2).element_spec) == (
        "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    )


def test_padded_batch_refuses_ragged_as_tf():
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1], [2, 3]]))
    with pytest.raises(TypeError, match="padded_batch"):
        ds.padded_batch(2)
