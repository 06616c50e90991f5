"""Reference partitioners: TF's documented examples, its formulas' laws, the div shard rule."""

import doctest
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from simdist_reference import partitioners as ref

shapes = st.lists(st.integers(1, 40), min_size=1, max_size=3)


def test_docstring_examples():
    assert doctest.testmod(ref).failed == 0


def test_tf_api_page_examples():
    # The API pages' examples for a float32 variable of shape [6, 1].
    assert ref.shard_counts("FixedShards", {"num_shards": 2}, [10, 3], "float32") == [2, 1]
    assert ref.min_size_shards([6, 1], 4, min_shard_bytes=4, max_shards=2) == [2, 1]
    assert ref.min_size_shards([6, 1], 4, min_shard_bytes=4, max_shards=10) == [6, 1]
    assert ref.max_size_shards([6, 1], 4, max_shard_bytes=4) == [6, 1]
    assert ref.max_size_shards([6, 1], 4, max_shard_bytes=4, max_shards=2) == [2, 1]
    assert ref.max_size_shards([6, 1], 4, max_shard_bytes=1024) == [1, 1]


def test_element_bytes():
    assert ref.element_bytes("float16") == 2 and ref.element_bytes("bool") == 1
    assert ref.element_bytes("string") == 16 and ref.element_bytes("string", 3) == 3


@given(shapes, st.integers(1, 5000), st.integers(1, 12), st.sampled_from([1, 2, 4, 8]))
def test_min_size_law(shape, min_bytes, max_shards, size):
    (count, *rest) = ref.min_size_shards(shape, size, min_bytes, max_shards)
    assert rest == [1] * (len(shape) - 1)
    assert 1 <= count <= min(shape[0], max_shards)
    total = math.prod(shape) * size
    if count > 1:  # one shard fewer would not be needed: the bytes exceed count - 1 minimums
        assert (count - 1) * min_bytes < total
    if count < min(shape[0], max_shards):  # not capped: count minimums cover the bytes
        assert total <= count * min_bytes


@given(shapes, st.integers(1, 5000), st.sampled_from([1, 2, 4, 8]))
def test_max_size_law(shape, max_bytes, size):
    count = ref.max_size_shards(shape, size, max_bytes)[0]
    slice_bytes = math.prod(shape) // shape[0] * size
    per_shard = -(-shape[0] // count)  # rows of the largest shard
    if slice_bytes <= max_bytes:
        assert per_shard * slice_bytes <= max_bytes  # every shard within the limit
        if count > 1:  # one shard fewer would overflow the limit: as few shards as possible
            assert -(-shape[0] // (count - 1)) * slice_bytes > max_bytes
    else:
        assert count == shape[0]  # one slice per shard: as small as one axis allows


def test_max_shards_caps_max_size():
    assert ref.max_size_shards([100], 4, 4, max_shards=3) == [3]


def test_bad_arguments():
    with pytest.raises(ValueError, match="not an axis"):
        ref.fixed_shards([], 2)
    with pytest.raises(ValueError, match="unknown partitioner"):
        ref.shard_counts("Even", {}, [4], "float32")
    with pytest.raises(ValueError, match="num_shards"):
        ref.shard_offsets(4, 0)


@given(st.integers(0, 50), st.integers(1, 8))
def test_shard_offsets_div_rule(length, n):
    offsets = ref.shard_offsets(length, n)
    sizes = np.diff(offsets)
    assert offsets[0] == 0 and offsets[-1] == length and len(sizes) == n
    assert sizes.max() - sizes.min() <= 1 and list(sizes) == sorted(sizes, reverse=True)
    parts = ref.split_rows(np.arange(length), n)
    assert [len(p) for p in parts] == list(sizes)
    assert np.concatenate(parts).tolist() == list(range(length))
