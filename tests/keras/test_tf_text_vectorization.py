# ruff: noqa: E501 - the case source is data, kept as written
"""``TextVectorization`` against TF 2.21 + tf_keras: vocabularies, indices, counts and tf-idf
for each standardize/split/ngrams/output_mode, adapt on arrays and datasets; and the lookup,
hashing and embedding layers on ragged token tensors (values and gradients)."""

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

_RAGGED_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        words = tf.strings.split(["a b c a", "b zz", ""])
        out = {}
        for i, kw in enumerate([{}, {"output_mode": "multi_hot"}, {"output_mode": "count"},
                                {"mask_token": "", "num_oov_indices": 2}]):
            s = L.StringLookup(**kw)
            s.adapt(words)
            result = s(words)
            out[f"lookup{i}"] = result.to_tensor(-7).numpy() if hasattr(result, "row_splits") else result.numpy()
            out[f"vocab{i}"] = np.array(s.get_vocabulary()).astype(str)
        inv = L.StringLookup(vocabulary=["a", "b"], invert=True)
        out["invert"] = inv(tf.ragged.constant([[1, 2], [3]], dtype=tf.int64)).to_tensor("-").numpy()
        ids = L.IntegerLookup(vocabulary=[5, 7])(tf.ragged.constant([[5, 7, 9], [7]], dtype=tf.int64))
        out["int_lookup"] = ids.to_tensor(-7).numpy()
        out["hashing"] = L.Hashing(num_bins=5)(words).to_tensor(-7).numpy()
        out["hashing_count"] = L.Hashing(num_bins=5, output_mode="count")(words).numpy()
        embedding = L.Embedding(6, 3, embeddings_initializer=tf.keras.initializers.Constant(
            np.arange(18, dtype="float32").reshape(6, 3) / 10))
        rows = tf.ragged.constant([[1, 2, 5], [3]])
        with tf.GradientTape() as tape:
            vectors = embedding(rows)
            loss = tf.reduce_sum(tf.reduce_mean(vectors, axis=1) * [[1., 2., 3.], [4., 5., 6.]])
        out["embedding"] = vectors.to_tensor().numpy()
        out["embedding_shape"] = np.array([-1 if d is None else d for d in vectors.shape.as_list()])
        out["embedding_grad"] = tf.convert_to_tensor(tape.gradient(loss, embedding.embeddings)).numpy()
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
    sources = {"text": source, "ragged_layers": _RAGGED_CASE}
    ours = {name: tf_oracle.run_simdist(src, 1) for name, src in sources.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], 1) for name, src in sources.items()}
    )
    return ours, theirs, failures


@pytest.mark.parametrize("name", ["text", "ragged_layers"])
def test_matches_tf_keras(compared, name):
    ours, theirs, failures = compared
    assert name not in failures, failures.get(name)
    tf_oracle.assert_match(name, ours[name], theirs[name], rtol=1e-6, atol=1e-6)
