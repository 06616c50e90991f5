"""Model configs for save/load: Functional graphs, nested models, subclassed layers."""

from __future__ import annotations

import json

import numpy as np
import pytest

import simdist as tf
from simdist.keras import model_config

L = tf.keras.layers


def _graph():
    a = tf.keras.Input((4,), name="a")
    seq = tf.keras.Input((3, 2), name="seq")
    shared = L.Dense(3, activation="relu", name="shared")
    inner_in = tf.keras.Input((3,))
    inner = tf.keras.Model(inner_in, L.LayerNormalization()(inner_in), name="inner")
    x = inner(shared(a))
    y = L.GRU(3, name="gru")(seq)
    z = shared(L.Dense(4)(y))  # the shared layer's second call
    merged = L.Average()([x, z, L.BatchNormalization()(y)])
    out = {
        "value": L.Dense(1, name="value")(merged),
        "probs": L.Dense(2, activation="softmax", name="probs")(merged),
    }
    return tf.keras.Model({"a": a, "seq": seq}, out, name="graph")


def _inputs():
    rng = np.random.default_rng(0)
    return {
        "a": rng.standard_normal((5, 4)).astype("float32"),
        "seq": rng.standard_normal((5, 3, 2)).astype("float32"),
    }


def test_functional_round_trip_through_json(tmp_path):
    model = _graph()
    entry = model_config.model_to_config(model)
    text = json.dumps(entry, default=model_config.json_default)
    rebuilt = model_config.model_from_config(
        json.loads(text), model_config.builtin_layers(), "test"
    )
    assert [x.name for x in rebuilt.layers] == [x.name for x in model.layers]
    assert [w.name for w in rebuilt.weights] == [w.name for w in model.weights]
    rebuilt.set_weights(model.get_weights())
    ours, theirs = model(_inputs()), rebuilt(_inputs())
    for key in ("value", "probs"):
        np.testing.assert_array_equal(np.asarray(ours[key]), np.asarray(theirs[key]))


def test_functional_save_and_load_model(tmp_path):
    model = _graph()
    losses = {"value": "mse", "probs": "sparse_categorical_crossentropy"}
    model.compile(optimizer="sgd", loss=losses)
    model.save(tmp_path / "saved")
    loaded = tf.keras.models.load_model(tmp_path / "saved", compile=False)
    for key in ("value", "probs"):
        np.testing.assert_array_equal(
            np.asarray(model(_inputs())[key]), np.asarray(loaded(_inputs())[key])
        )


def test_custom_layer_needs_get_config_and_custom_objects(tmp_path):
    class Scale(L.Layer):
        def __init__(self, factor, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

    x = tf.keras.Input((2,))
    model = tf.keras.Model(x, Scale(3.0)(x))
    with pytest.raises(NotImplementedError, match=r"Scale has arguments \['factor'\]"):
        model.save(tmp_path / "m")

    class GoodScale(Scale):
        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    x = tf.keras.Input((2,))
    model = tf.keras.Model(x, GoodScale(3.0)(x))
    model.save(tmp_path / "good")
    with pytest.raises(ValueError, match="custom_objects"):
        tf.keras.models.load_model(tmp_path / "good")
    loaded = tf.keras.models.load_model(tmp_path / "good", custom_objects={"GoodScale": GoodScale})
    np.testing.assert_allclose(np.asarray(loaded(np.ones((1, 2), "float32"))), 3.0)


def test_lambda_layer_cannot_be_saved(tmp_path):
    x = tf.keras.Input((2,))
    model = tf.keras.Model(x, L.Lambda(lambda t: t * 2.0)(x))
    with pytest.raises(ValueError, match="Lambda layer"):
        model.save(tmp_path / "m")


def test_layer_configs_rebuild_equal_layers():
    layers = [
        L.Reshape((2, -1)),
        L.Permute((2, 1)),
        L.Conv1D(2, 3, padding="causal"),
        L.Embedding(5, 2),
        L.BatchNormalization(momentum=0.9),
        L.LayerNormalization(axis=1),
        L.LSTM(3, return_sequences=True),
        L.GRU(2, reset_after=False),
        L.SimpleRNN(2),
        L.StringLookup(vocabulary=["a", "b"]),
        L.IntegerLookup(vocabulary=[3, 4]),
        L.Hashing(5, salt=3),
        L.CategoryEncoding(4, output_mode="count"),
        L.Rescaling(0.5),
        L.Normalization(mean=[1.0], variance=[2.0]),
        L.Concatenate(axis=1),
        L.ZeroPadding2D(((1, 0), (0, 2))),
        L.UpSampling2D(3),
        L.GlobalMaxPooling2D(),
        L.Dense(2, kernel_regularizer=tf.keras.regularizers.l2(0.1)),
        L.experimental.SyncBatchNormalization(),
    ]
    for layer in layers:
        config = layer.get_config()
        json.dumps(config, default=model_config.json_default)
        again = type(layer).from_config(config)
        assert again.get_config() == config, type(layer).__name__
