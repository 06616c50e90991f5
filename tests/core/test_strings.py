"""``tf.strings``: splitting against Python's ``bytes.split`` (hypothesis), TF's known
buckets, the elementwise ops on ragged tensors and the errors TF raises."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist import errors

texts = st.lists(st.text(alphabet="ab ,\t", max_size=12), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(texts, st.sampled_from([None, ",", "b,"]), st.integers(-1, 3))
def test_split_is_bytes_split(strings, sep, maxsplit):
    got = tf.strings.split(strings, sep=sep, maxsplit=maxsplit).to_list()
    sep_bytes = None if sep is None else sep.encode()
    assert got == [s.encode().split(sep_bytes, maxsplit) for s in strings]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["x", "y", "z"]), max_size=5), min_size=1, max_size=4),
    st.integers(1, 3),
)
def test_ngrams_are_windows(rows, width):
    got = tf.strings.ngrams(tf.ragged.constant(rows, dtype=tf.string, ragged_rank=1), width)
    expected = [
        [" ".join(r[i : i + width]).encode() for i in range(len(r) - width + 1)] for r in rows
    ]
    assert got.to_list() == expected


def test_hash_buckets_are_tfs():
    # TF 2.21: tf.strings.to_hash_bucket_fast(["hello", "world", ""], 10) -> [6, 8, 3]
    got = tf.strings.to_hash_bucket_fast(["hello", "world", ""], 10)
    assert got.dtype == tf.int64 and got.numpy().tolist() == [6, 8, 3]
    assert tf.strings.to_hash_bucket_fast(["hello"], 2**40).numpy().tolist() == [726675229928]


def test_elementwise_ops_keep_ragged_rows():
    words = tf.strings.split(["Hello World", "A"])
    assert tf.strings.lower(words).to_list() == [[b"hello", b"world"], [b"a"]]
    assert tf.strings.length(words).to_list() == [[5, 5], [1]]
    numbers = tf.strings.to_number(tf.strings.split(["1 2", "3"]), out_type=tf.int64)
    assert numbers.to_list() == [[1, 2], [3]] and numbers.dtype == tf.int64


def test_text_ops():
    assert tf.strings.reduce_join(
        [["a", "b"], ["c", "d"]], axis=1, separator=","
    ).numpy().tolist() == [b"a,b", b"c,d"]
    assert tf.strings.regex_replace("a1b22", r"\d+", "#").numpy() == b"a#b#"
    assert tf.strings.substr("hello", -3, 2).numpy() == b"ll"
    assert tf.strings.as_string([7], width=3, fill="0").numpy().tolist() == [b"007"]
    assert tf.strings.format("{}", tf.range(10)).numpy() == b"[0 1 2 ... 7 8 9]"
    assert tf.strings.unicode_decode("hé", "UTF-8").numpy().tolist() == [104, 233]
    np.testing.assert_array_equal(tf.strings.to_number(["1.5"]).numpy(), np.float32([1.5]))


def test_errors_are_tfs():
    with pytest.raises(errors.InvalidArgumentError, match="could not correctly convert"):
        tf.strings.to_number(["1.5"], out_type=tf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        tf.strings.substr(["hi"], 5, 1)
    with pytest.raises(errors.InvalidArgumentError, match="Invalid pattern"):
        tf.strings.regex_full_match(["a"], "(")
    with pytest.raises(errors.InvalidArgumentError, match="expected to be a string"):
        tf.strings.lower(tf.constant([1]))
    with pytest.raises(TypeError):
        tf.strings.split([1, 2])
    with pytest.raises(ValueError, match="expects 2 tensors"):
        tf.strings.format("{}{}", (1,))
