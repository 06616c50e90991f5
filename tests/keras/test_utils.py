"""``tf.keras.utils``: Sequence in fit, the NumPy helpers, custom objects, the refusals."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf

utils = tf.keras.utils


class _Batches(utils.Sequence):
    def __init__(self, x, y, batch_size):
        super().__init__()
        self.x, self.y, self.batch_size = x, y, batch_size
        self.seen: list[int] = []
        self.epochs_ended = 0

    def __len__(self):
        return int(np.ceil(len(self.x) / self.batch_size))

    def __getitem__(self, index):
        self.seen.append(index)
        part = slice(index * self.batch_size, (index + 1) * self.batch_size)
        return self.x[part], self.y[part]

    def on_epoch_end(self):
        self.epochs_ended += 1


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 3)).astype(np.float32)
    return x, (x @ np.array([[1.0], [2.0], [-1.0]], np.float32))


def _model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    return model


def test_fit_on_a_sequence_matches_fit_on_the_arrays():
    x, y = _data()
    tf.random.set_seed(1)
    by_arrays = _model()
    tf.random.set_seed(1)
    by_sequence = _model()
    by_sequence.set_weights(by_arrays.get_weights())
    sequence = _Batches(x, y, 8)
    h1 = by_arrays.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    h2 = by_sequence.fit(sequence, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(h1.history["loss"], h2.history["loss"], rtol=1e-6)
    for a, b in zip(by_arrays.get_weights(), by_sequence.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert sequence.seen == [0, 1, 2, 0, 1, 2] and sequence.epochs_ended == 2


def test_fit_on_a_sequence_under_mirrored_strategy_and_shuffled():
    x, y = _data()
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        model = _model()
    sequence = _Batches(x[:16], y[:16], 4)
    tf.random.set_seed(3)  # fit's shuffles follow the global seed
    model.fit(sequence, epochs=2, shuffle=True, verbose=0)
    first, second = sequence.seen[:4], sequence.seen[4:]
    assert sorted(first) == sorted(second) == [0, 1, 2, 3]
    for epoch, seen in enumerate((first, second)):  # the documented deterministic order
        assert seen == [int(i) for i in np.random.default_rng([3, epoch]).permutation(4)]
    assert model.evaluate(sequence, verbose=0) >= 0


def test_sequence_refuses_y_and_batch_size():
    x, y = _data()
    sequence = _Batches(x, y, 8)
    with pytest.raises(ValueError, match="`y` argument is not supported"):
        _model().fit(sequence, y, verbose=0)
    with pytest.raises(ValueError, match="batch_size"):
        _model().fit(sequence, batch_size=4, verbose=0)


def _reference_one_hot(labels, num_classes):
    out = np.zeros((len(labels), num_classes), np.float32)
    for row, label in enumerate(labels):
        out[row][label] = 1.0
    return out


@given(st.lists(st.integers(0, 6), min_size=1, max_size=20))
def test_to_categorical_against_a_loop(labels):
    classes = max(labels) + 1
    np.testing.assert_array_equal(utils.to_categorical(labels), _reference_one_hot(labels, classes))
    column = np.asarray(labels).reshape(-1, 1)
    assert utils.to_categorical(column, 9).shape == (len(labels), 9)  # (n, 1): axis dropped


def test_to_categorical_shapes_and_dtype():
    out = utils.to_categorical([[0, 1], [2, 1]], num_classes=3, dtype="int32")
    assert out.shape == (2, 2, 3) and out.dtype == np.int32
    assert out[1, 0].tolist() == [0, 0, 1]


@given(
    hnp.arrays(np.float64, (3, 4), elements=st.floats(-10, 10, allow_subnormal=False)),
    st.sampled_from([0, 1, -1]),
    st.sampled_from([1, 2]),
)
def test_normalize_against_the_definition(x, axis, order):
    out = utils.normalize(x, axis=axis, order=order)
    norms = np.sum(np.abs(x) ** order, axis=axis, keepdims=True) ** (1 / order)
    expected = x / np.where(norms == 0, 1, norms)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_set_random_seed_seeds_python_numpy_and_simdist():
    utils.set_random_seed(7)
    first = (random.random(), np.random.rand(), tf.random.uniform([2]).numpy())
    utils.set_random_seed(7)
    second = (random.random(), np.random.rand(), tf.random.uniform([2]).numpy())
    assert first[0] == second[0] and first[1] == second[1]
    np.testing.assert_array_equal(first[2], second[2])
    with pytest.raises(ValueError, match="Expected `seed` argument to be an integer"):
        utils.set_random_seed(1.5)


@utils.register_keras_serializable(package="simdist_tests")
class _Doubling(tf.keras.layers.Layer):
    def call(self, x):
        return x * 2.0


class _Halving(tf.keras.layers.Layer):
    def call(self, x):
        return x * 0.5


def test_registered_and_scoped_classes_load(tmp_path):
    assert utils.get_registered_name(_Doubling) == "simdist_tests>_Doubling"
    assert utils.get_registered_object("simdist_tests>_Doubling") is _Doubling
    assert utils.get_registered_name(_Halving) == "_Halving"
    inputs = tf.keras.Input((2,))
    model = tf.keras.Model(inputs, _Halving()(_Doubling()(inputs)))
    config = model.get_config()
    with pytest.raises(ValueError, match="_Halving"):
        tf.keras.Model.from_config(config)  # _Doubling is registered, _Halving is not
    with utils.custom_object_scope({"_Halving": _Halving}):
        again = tf.keras.Model.from_config(config)
        assert utils.get_registered_object("_Halving") is _Halving
    assert utils.get_registered_object("_Halving") is None  # the scope ended
    assert [type(layer) for layer in again.layers[1:]] == [_Doubling, _Halving]
    path = str(tmp_path / "model")
    model.save(path)
    with utils.CustomObjectScope({"_Halving": _Halving}):
        loaded = tf.keras.models.load_model(path)
    np.testing.assert_array_equal(loaded(np.ones((1, 2), np.float32)).numpy(), [[1.0, 1.0]])


def test_register_refuses_a_class_without_get_config():
    with pytest.raises(ValueError, match="get_config"):
        utils.register_keras_serializable()(type("NoConfig", (), {}))


def test_get_file_returns_a_cached_file_and_refuses_downloads(tmp_path):
    with pytest.raises(ConnectionError, match="does not download"):
        utils.get_file("data.csv", "https://example.com/data.csv", cache_dir=str(tmp_path))
    cached = tmp_path / "datasets" / "data.csv"
    cached.parent.mkdir()
    cached.write_text("a,b\n")
    path = utils.get_file("data.csv", "https://example.com/data.csv", cache_dir=str(tmp_path))
    assert path == str(cached)
    sha = "0" * 64
    with pytest.raises(ValueError, match="does not match"):
        utils.get_file("data.csv", "u", file_hash=sha, cache_dir=str(tmp_path))


def test_plot_model_is_refused():
    with pytest.raises(ImportError, match="pydot"):
        utils.plot_model(_model())


def test_pack_and_unpack():
    assert utils.pack_x_y_sample_weight(1) == 1
    assert utils.pack_x_y_sample_weight([1, 2]) == ([1, 2],)
    assert utils.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    assert utils.unpack_x_y_sample_weight([1, 2]) == (1, 2, None)


def test_predict_on_a_sequence_of_inputs():
    x, _ = _data()

    class Inputs(utils.Sequence):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            return x[index * 10 : (index + 1) * 10]

    model = _model()
    np.testing.assert_allclose(
        model.predict(Inputs(), verbose=0), model.predict(x, batch_size=10, verbose=0)
    )
