"""Every counting/reshaping transformation against a plain-Python model on lists."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from reference import batching as reference_batching
from simdist import errors
from simdist.data import Dataset

lengths = st.integers(0, 50)
batch_sizes = st.integers(1, 8)
counts = st.integers(-1, 60)


def values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


def card(ds):
    return int(ds.cardinality().numpy())


def model_batches(xs, b, drop):
    out = [xs[i : i + b] for i in range(0, len(xs), b)]
    return [c for c in out if len(c) == b] if drop else out


@given(lengths, batch_sizes, st.booleans())
def test_batch_matches_model(n, b, drop):
    ds = Dataset.range(n).batch(b, drop_remainder=drop)
    expected = model_batches(list(range(n)), b, drop)
    assert values(ds) == expected
    assert card(ds) == len(expected)
    assert ds.element_spec == tf.TensorSpec([b if drop else None], tf.int64)


@given(lengths, batch_sizes)
def test_unbatch_inverts_batch(n, b):
    ds = Dataset.range(n).batch(b).unbatch()
    assert values(ds) == list(range(n))
    assert ds.element_spec == tf.TensorSpec([], tf.int64)


def test_unbatch_cardinality_known_only_with_static_batch_dim():
    assert card(Dataset.range(10).batch(2, drop_remainder=True).unbatch()) == 10
    assert card(Dataset.range(10).batch(3).unbatch()) == tf.data.UNKNOWN_CARDINALITY


@given(st.integers(0, 20), st.integers(0, 4))
def test_repeat_matches_model(n, k):
    ds = Dataset.range(n).repeat(k)
    assert values(ds) == list(range(n)) * k
    assert card(ds) == n * k


def test_repeat_forever_is_infinite_and_cycles():
    ds = Dataset.range(3).repeat()
    assert card(ds) == tf.data.INFINITE_CARDINALITY
    assert values(ds.take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert card(Dataset.range(0).repeat()) == 0
    assert values(Dataset.range(0).repeat(-1)) == []  # an empty input does not spin
    assert values(Dataset.range(5).filter(lambda x: x > 9).repeat()) == []


@given(lengths, counts)
def test_take_and_skip_match_model(n, k):
    xs = list(range(n))
    take, skip = Dataset.range(n).take(k), Dataset.range(n).skip(k)
    assert values(take) == (xs if k < 0 else xs[:k])
    assert values(skip) == ([] if k < 0 else xs[k:])
    assert card(take) == len(values(take))
    assert card(skip) == len(values(skip))


@given(lengths, st.integers(1, 6), st.data())
def test_shard_matches_model(n, num_shards, data):
    index = data.draw(st.integers(0, num_shards - 1))
    ds = Dataset.range(n).shard(num_shards, index)
    assert values(ds) == list(range(n))[index::num_shards]
    assert card(ds) == len(range(n)[index::num_shards])


@pytest.mark.parametrize("num_shards,index", [(2, 2), (2, -1), (3, 7)])
def test_shard_index_out_of_range(num_shards, index):
    with pytest.raises(errors.InvalidArgumentError, match="Index must be between 0 and"):
        Dataset.range(4).shard(num_shards, index)


def test_shard_needs_positive_count():
    with pytest.raises(errors.InvalidArgumentError, match="greater than zero"):
        Dataset.range(4).shard(0, 0)


@pytest.mark.parametrize("size", [0, -3])
def test_batch_size_must_be_positive(size):
    with pytest.raises(errors.InvalidArgumentError, match="batch_size must be greater than zero"):
        Dataset.range(4).batch(size)


def test_cardinality_through_infinite_and_unknown():
    inf = Dataset.range(3).repeat()
    unknown = Dataset.range(3).filter(lambda x: x > 0)
    assert card(inf.batch(2)) == tf.data.INFINITE_CARDINALITY
    assert card(unknown.batch(2)) == tf.data.UNKNOWN_CARDINALITY
    assert card(inf.take(5)) == 5
    assert card(unknown.take(5)) == tf.data.UNKNOWN_CARDINALITY
    assert card(inf.skip(5)) == tf.data.INFINITE_CARDINALITY
    assert card(inf.shard(2, 0)) == tf.data.INFINITE_CARDINALITY
    assert card(Dataset.zip((inf, Dataset.range(4)))) == 4
    assert card(Dataset.zip((unknown, Dataset.range(4)))) == tf.data.UNKNOWN_CARDINALITY
    assert card(Dataset.range(2).concatenate(inf)) == tf.data.INFINITE_CARDINALITY
    assert card(Dataset.range(2).concatenate(unknown)) == tf.data.UNKNOWN_CARDINALITY
    assert card(unknown.repeat()) == tf.data.INFINITE_CARDINALITY
    assert card(unknown.repeat(0)) == 0
    assert tf.data.experimental.cardinality(Dataset.range(7)).numpy() == 7


def test_len_follows_tf():
    assert len(Dataset.range(7).batch(2)) == 4
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(Dataset.range(3).repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(Dataset.range(3).filter(lambda x: x > 0))
    assert bool(Dataset.range(0))  # truthy even when empty, as TF


@given(lengths, lengths)
def test_zip_and_concatenate_match_model(n, m):
    a, b = Dataset.range(n), Dataset.range(100, 100 + m)
    zipped = Dataset.zip((a, b))
    assert values(zipped) == [[x, y] for x, y in zip(range(n), range(100, 100 + m), strict=False)]
    assert card(zipped) == min(n, m)
    assert values(a.concatenate(b)) == list(range(n)) + list(range(100, 100 + m))
    assert card(a.concatenate(b)) == n + m


def test_zip_takes_structures_and_varargs():
    a, b = Dataset.range(3), Dataset.range(3).map(lambda x: x * 10)
    first = next(iter(Dataset.zip({"a": a, "b": b})))
    assert sorted(first) == ["a", "b"] and int(first["b"]) == 0
    x, y = list(Dataset.zip(a, b))[2]
    assert (int(x), int(y)) == (2, 20)


def test_concatenate_requires_compatible_elements():
    with pytest.raises(TypeError, match="Incompatible"):
        Dataset.range(3).concatenate(Dataset.from_tensor_slices([1.0, 2.0]))
    mixed = Dataset.from_tensors([1, 2]).concatenate(Dataset.from_tensors([1, 2, 3]))
    assert mixed.element_spec == tf.TensorSpec([None], tf.int32)


@given(lengths, st.integers(-5, 5))
def test_enumerate_matches_model(n, start):
    ds = Dataset.range(n).map(lambda x: x * 3).enumerate(start)
    assert values(ds) == [[start + i, 3 * i] for i in range(n)]
    assert ds.element_spec[0] == tf.TensorSpec([], tf.int64)
    assert card(ds) == n


def test_prefetch_cache_and_options_keep_values():
    ds = Dataset.range(5)
    assert values(ds.prefetch(tf.data.AUTOTUNE)) == list(range(5))
    assert values(ds.prefetch(0)) == list(range(5))
    with pytest.raises(errors.InvalidArgumentError):
        ds.prefetch(-7)
    calls = []
    cached = ds.map(lambda x: calls.append(1) or x).cache()
    assert values(cached) == values(cached) == list(range(5))
    assert len(calls) == 5  # the second pass replays the cache


def test_padded_batch_pads_to_longest():
    ds = Dataset.from_generator(
        lambda: ([i] * i for i in range(1, 5)), output_signature=tf.TensorSpec([None], tf.int64)
    )
    batches = values(ds.padded_batch(2))
    assert batches == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = values(ds.padded_batch(4, padded_shapes=[5], padding_values=np.int64(-1)))
    assert fixed[0][0] == [1, -1, -1, -1, -1]
    assert ds.padded_batch(2).element_spec == tf.TensorSpec([None, None], tf.int64)


def test_batch_of_ragged_elements_is_an_error():
    ds = Dataset.from_generator(
        lambda: iter([[1], [1, 2]]), output_signature=tf.TensorSpec([None], tf.int32)
    )
    with pytest.raises(errors.InvalidArgumentError, match="Cannot batch tensors with different"):
        list(ds.batch(2))


def test_guide_pipeline_from_tensors_repeat_batch():
    ds = Dataset.from_tensors(([1.0], [1.0])).repeat(100).batch(10)
    batches = list(ds)
    assert len(batches) == 10
    for x, y in batches:
        assert x.shape == (10, 1) and y.shape == (10, 1) and x.dtype == tf.float32
    assert repr(ds) == (
        "<_BatchDataset element_spec=(TensorSpec(shape=(None, 1), dtype=tf.float32, name=None),"
        " TensorSpec(shape=(None, 1), dtype=tf.float32, name=None))>"
    )


@given(
    st.integers(0, 30),
    batch_sizes,
    st.booleans(),
    st.sampled_from(["float32", "int64", "bool", "bytes"]),
    st.sampled_from(["array", "tuple", "dict"]),
)
def test_batches_of_slices_are_the_references_and_the_stacked_rows(n, b, drop, dtype, form):
    # A slices source cuts each batch as one copy of its rows; a map before the batch makes
    # batch stack the rows one by one. Both must be reference.batch of every component.
    rng = np.random.default_rng(n * 31 + b)
    if dtype == "bytes":
        images = np.array([str(v).encode() for v in rng.integers(0, 99, n * 6)]).reshape(n, 2, 3)
    else:
        images = (rng.random((n, 2, 3)) * 100).astype(dtype)
    labels = rng.integers(0, 10, n)
    source = {"array": images, "tuple": (images, labels), "dict": {"x": images, "y": labels}}
    ds = Dataset.from_tensor_slices(source[form])
    cut = list(ds.batch(b, drop_remainder=drop).as_numpy_iterator())
    rows = list(ds.map(lambda *e: e[0] if len(e) == 1 else e).batch(b, drop).as_numpy_iterator())
    want = reference_batching.batch(images, b, drop)
    first = {"array": lambda v: v, "tuple": lambda v: v[0], "dict": lambda v: v["x"]}[form]
    assert len(cut) == len(rows) == len(want)
    for got, stacked, expected in zip(cut, rows, want, strict=True):
        assert first(got).dtype == first(stacked).dtype and first(got).shape == expected.shape
        np.testing.assert_array_equal(first(got), expected)
        np.testing.assert_array_equal(first(stacked), expected)
