# ruff: noqa: E501 - the case source is data, kept as written
"""``TextVectorization`` against TF 2.21 + tf_keras: vocabularies, indices, counts and tf-idf
for each standardize/split/ngrams/output_mode, adapt on arrays and datasets."""

from __future__ import annotations

import textwrap

import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        corpus = ["The cat sat on the mat.", "The dog ate my homework!", "a cat, a dog",
                  "Hello, World", "  spaces   everywhere  ", "ÀB àb", "", "the the the"]
        probe = ["the cat ate", "unknown words here", "Dog? DOG!", "", "a b c d e f g"]
        L = tf.keras.layers
        out = {}
        configs = {configs}
        for i, kw in enumerate(configs):
            layer = L.TextVectorization(**kw)
            if i % 2:
                layer.adapt(tf.data.Dataset.from_tensor_slices(corpus).batch(3))
            else:
                layer.adapt(np.array(corpus))
            out[f"vocab{{i}}"] = np.array(layer.get_vocabulary(), dtype=object).astype(str)
            out[f"size{{i}}"] = np.array(layer.vocabulary_size())
            result = layer(tf.constant(probe))
            out[f"out{{i}}"] = result.to_tensor(-7).numpy() if hasattr(result, "row_splits") else result.numpy()
            out[f"col{{i}}"] = layer(tf.constant([[p] for p in probe[:3]])).numpy() if not kw.get("ragged") else np.zeros(1)
        fixed = L.TextVectorization(vocabulary=["cat", "dog", "the"], output_sequence_length=3)
        out["fixed"] = fixed(["the dog and the cat"]).numpy()
        out["fixed_vocab"] = np.array(fixed.get_vocabulary()).astype(str)
        tfidf = L.TextVectorization(output_mode="tf_idf", vocabulary=["cat", "dog"], idf_weights=[0.5, 2.0])
        out["fixed_tfidf"] = tfidf(["cat dog dog bird"]).numpy()
        char = L.TextVectorization(split="character", standardize=None, output_sequence_length=6)
        char.adapt(["abba", "cab"])
        out["char"] = char(["abc", "zz"]).numpy()
        custom = L.TextVectorization(standardize=lambda x: tf.strings.regex_replace(x, "[0-9]", "#"),
                                     split=lambda x: tf.strings.split(x, sep=","))
        custom.adapt(["a1,b2,a1", "c3"])
        out["custom_vocab"] = np.array(custom.get_vocabulary()).astype(str)
        out["custom"] = custom(["a5,c9,zz"]).numpy()
        return out
    """
)

CONFIGS = [
    {},
    {"output_sequence_length": 4},
    {"max_tokens": 6, "output_sequence_length": 5},
    {"ngrams": 2},
    {"ngrams": (1, 3), "max_tokens": 12},
    {"standardize": "lower"},
    {"standardize": "strip_punctuation"},
    {"standardize": None},
    {"output_mode": "multi_hot"},
    {"output_mode": "count", "max_tokens": 8},
    {"output_mode": "count", "ngrams": 2},
    {"output_mode": "tf_idf"},
    {"output_mode": "tf_idf", "max_tokens": 5, "pad_to_max_tokens": False},
    {"output_mode": "multi_hot", "max_tokens": 20, "pad_to_max_tokens": True},
    {"ragged": True},
]


@pytest.fixture(scope="module")
def compared():
    source = _CASE.replace("{configs}", repr(CONFIGS)).replace("{{", "{").replace("}}", "}")
    ours = {"text": tf_oracle.run_simdist(source, 1)}
    theirs, failures = tf_oracle.run_tf({"text": (source, ours["text"], 1)})
    return ours, theirs, failures


def test_text_vectorization_matches_tf_keras(compared):
    ours, theirs, failures = compared
    assert "text" not in failures, failures.get("text")
    tf_oracle.assert_match("text", ours["text"], theirs["text"], rtol=1e-6, atol=1e-6)
