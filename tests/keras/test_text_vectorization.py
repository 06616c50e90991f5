"""``TextVectorization`` without TF: the docstring's pipeline, each output mode on a tiny
corpus worked by hand, and Keras 2's argument errors."""

import numpy as np
import pytest

import simdist as tf

L = tf.keras.layers


def test_int_mode_pads_and_cuts():
    layer = L.TextVectorization(output_sequence_length=3)
    layer.adapt(["b a b", "c b"])  # counts b:3 a:1 c:1 (ties by descending token: c, a)
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "c", "a"]
    assert layer(["A b, zz c d"]).numpy().tolist() == [[4, 2, 1]]
    assert layer(["b"]).numpy().tolist() == [[2, 0, 0]]
    assert layer(tf.constant([["b c"]])).numpy().tolist() == [[2, 3, 0]]


def test_ragged_and_counting_modes():
    ragged = L.TextVectorization(ragged=True, vocabulary=["x", "y"])
    out = ragged(["x y q", "y"])
    assert isinstance(out, tf.RaggedTensor) and out.to_list() == [[2, 3, 1], [3]]
    count = L.TextVectorization(output_mode="count", vocabulary=["x", "y"])
    np.testing.assert_array_equal(count(["x y y q", ""]).numpy(), [[1, 1, 2], [0, 0, 0]])
    multi = L.TextVectorization(output_mode="multi_hot", vocabulary=["x", "y"])
    np.testing.assert_array_equal(multi(["y y"]).numpy(), [[0, 0, 1]])
    tfidf = L.TextVectorization(output_mode="tf_idf")
    tfidf.adapt(["x y", "y"])  # df: y 2, x 1 of 2 documents
    idf = np.log(1 + 2 / (1 + np.array([2.0, 1.0])))
    expected = [np.mean(idf.astype(np.float32)), 2 * idf[0], idf[1]]
    np.testing.assert_allclose(tfidf(["q y y x"]).numpy()[0], expected, rtol=1e-6)


def test_ngrams_and_character_split():
    layer = L.TextVectorization(ngrams=2, standardize=None)
    layer.adapt(["a b c"])
    assert sorted(layer.get_vocabulary()[2:]) == ["a", "a b", "b", "b c", "c"]
    chars = L.TextVectorization(split="character", vocabulary=["a", "b"])
    assert chars(["abz"]).numpy().tolist() == [[2, 3, 1]]


def test_errors_are_keras_2s():
    with pytest.raises(ValueError, match="output_sequence_length"):
        L.TextVectorization(output_mode="count", output_sequence_length=3)
    with pytest.raises(ValueError, match="standardize"):
        L.TextVectorization(standardize="upper")
    with pytest.raises(ValueError, match="Cannot adapt"):
        L.TextVectorization(vocabulary=["a"]).adapt(["a"])
    with pytest.raises(ValueError, match="last shape dimension must be 1"):
        L.TextVectorization(vocabulary=["a"])(tf.constant([["a", "b"]]))
