"""model.save / load_model: round trips, strategies, damaged files, atomic replacement."""

import json
import os

import numpy as np
import pytest

import simdist as tf
from simdist import errors, keras
from simdist.keras import backend, layers, saving


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()


def cnn():
    return keras.Sequential([
        layers.Conv2D(4, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.AveragePooling2D(pool_size=1),
        layers.Flatten(),
        layers.Dropout(0.25),
        layers.Dense(8),
        layers.ReLU(max_value=6.0),
        layers.Activation("tanh"),
        layers.Dense(3),
    ])  # fmt: skip


def images(n=2, seed=0):
    return np.random.default_rng(seed).random((n, 10, 10, 1), dtype=np.float32)


def test_round_trip_every_saved_layer(tmp_path):
    model = cnn()
    x = images()
    expected = model(x).numpy()
    model.save(tmp_path / "m")
    assert sorted(os.listdir(tmp_path / "m")) == ["config.json", "manifest.json", "weights.npz"]
    loaded = keras.models.load_model(tmp_path / "m")
    assert [type(a) for a in loaded.layers] == [type(b) for b in model.layers]
    normal = [json.loads(json.dumps(b.get_config())) for b in model.layers]
    assert [json.loads(json.dumps(a.get_config())) for a in loaded.layers] == normal
    assert [v.name for v in loaded.weights] == [v.name for v in model.weights]
    np.testing.assert_array_equal(loaded(x).numpy(), expected)
    # The saved model can be saved again and loaded again.
    loaded.save(tmp_path / "m2")
    again = keras.models.load_model(tmp_path / "m2")
    np.testing.assert_array_equal(again(x).numpy(), expected)


def test_layer_configs_survive(tmp_path):
    model = cnn()
    model(images())
    model.save(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m")
    relu = loaded.layers[6]
    assert (relu.max_value, relu.negative_slope) == (6.0, 0.0)
    assert loaded.layers[4].rate == 0.25
    assert loaded.layers[7].activation is keras.activations.tanh
    assert loaded.layers[0].kernel_size == (3, 3)


def test_input_layer_and_declared_shape(tmp_path):
    model = keras.Sequential([layers.InputLayer(input_shape=(3,)), layers.Dense(2)])
    model.save(tmp_path / "a")
    loaded = keras.models.load_model(tmp_path / "a")
    assert loaded.built
    np.testing.assert_array_equal(loaded.get_weights()[0], model.get_weights()[0])
    model = keras.Sequential([layers.Dense(2, input_shape=(3,))])
    model.save(tmp_path / "b")
    assert keras.models.load_model(tmp_path / "b").built


def test_config_json_documents_the_format(tmp_path):
    model = keras.Sequential([layers.Dense(2, input_shape=(3,))])
    model.save(tmp_path / "m")
    doc = json.loads((tmp_path / "m" / "config.json").read_text())
    assert doc["format"] == "simdist-keras-model"
    assert doc["model"]["class_name"] == "Sequential"
    assert doc["model"]["config"]["layers"][0]["class_name"] == "Dense"
    assert [w["shape"] for w in doc["weights"]] == [[3, 2], [2]]
    with np.load(tmp_path / "m" / "weights.npz", allow_pickle=False) as archive:
        assert len(archive.files) == 2


@pytest.mark.parametrize("replicas", [1, 2])
def test_load_under_strategy_is_mirrored_and_back(tmp_path, replicas):
    model = cnn()
    x = images()
    expected = model(x).numpy()
    model.save(tmp_path / "m")
    strategy = tf.distribute.MirroredStrategy([f"/gpu:{i}" for i in range(replicas)])
    with strategy.scope():
        loaded = keras.models.load_model(tmp_path / "m")
    assert type(loaded.weights[0]).__name__ == "MirroredVariable"
    for value in loaded.weights[0].values:
        np.testing.assert_array_equal(value.numpy(), model.weights[0].numpy())
    np.testing.assert_allclose(loaded(x).numpy(), expected, rtol=1e-6)
    loaded.save(tmp_path / "from_strategy")  # saved under a strategy, loaded without
    plain = keras.models.load_model(tmp_path / "from_strategy")
    assert type(plain.weights[0]).__name__ == "ResourceVariable"  # plain (TF's class name)
    np.testing.assert_allclose(plain(x).numpy(), expected, rtol=1e-6)


def test_subclassed_model_saves_as_keras_does(tmp_path):
    # A subclassed model is saved as its class name, get_config() and build shape (Keras's
    # rule, tests/keras/test_model_config.py); loading needs the class in custom_objects.
    class MyModel(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(1)

        def call(self, x):
            return self.dense(x)

    model = MyModel()
    x = np.ones((1, 2), np.float32)
    model(x)
    model.save(tmp_path / "m")
    with pytest.raises(ValueError, match="custom_objects"):
        keras.models.load_model(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m", custom_objects={"MyModel": MyModel})
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    built = MyModel()
    built.build((None, 2))  # built by build(), not by a call: the shape is recorded too
    built.save(tmp_path / "built")
    again = keras.models.load_model(tmp_path / "built", custom_objects={"MyModel": MyModel})
    assert len(again.weights) == 2

    class NeedsConfig(keras.Model):
        def __init__(self, units):
            super().__init__()
            self.dense = layers.Dense(units)

        def call(self, x):
            return self.dense(x)

    other = NeedsConfig(3)
    other(x)
    with pytest.raises(NotImplementedError, match="must override `get_config"):
        other.save(tmp_path / "n")
    assert not (tmp_path / "n").exists()


def test_save_weights_load_weights_subclassed(tmp_path):
    class MyModel(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    x = np.ones((1, 3), np.float32)
    model = MyModel()
    expected = model(x).numpy()
    model.save_weights(str(tmp_path / "w" / "ckpt"))
    assert tf.train.latest_checkpoint(str(tmp_path / "w")) == str(tmp_path / "w" / "ckpt")
    other = MyModel()
    other(x)
    assert not np.array_equal(other(x).numpy(), expected)
    other.load_weights(str(tmp_path / "w" / "ckpt")).assert_consumed()
    np.testing.assert_array_equal(other(x).numpy(), expected)


def test_unbuilt_model_and_hdf5_refused(tmp_path):
    with pytest.raises(ValueError, match="not built"):
        keras.Sequential([layers.Dense(1)]).save(tmp_path / "m")
    model = keras.Sequential([layers.Dense(1, input_shape=(2,))])
    model.save(tmp_path / "m.h5")  # a simdist bundle under Keras's file name, not HDF5
    assert not (tmp_path / "m.h5").read_bytes().startswith(b"\x89HDF")
    assert (tmp_path / "m.h5").read_bytes().startswith(b"simdist-bundle 1 ")
    with pytest.raises(ValueError, match="save_format"):
        model.save(tmp_path / "m", save_format="keras_v3")


def test_regularizer_refused(tmp_path):
    model = keras.Sequential(
        [layers.Dense(1, input_shape=(2,), kernel_regularizer=lambda w: tf.reduce_sum(w))]
    )
    with pytest.raises(NotImplementedError, match="kernel_regularizer"):
        model.save(tmp_path / "m")


def test_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="No file or directory found"):
        keras.models.load_model(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="config.json"):
        keras.models.load_model(tmp_path / "empty")


def saved(tmp_path, name="m"):
    model = keras.Sequential([layers.Dense(2, input_shape=(3,))])
    model.save(tmp_path / name)
    return model, tmp_path / name


@pytest.mark.parametrize("file", ["weights.npz", "manifest.json", "config.json"])
def test_truncated_files_raise_data_loss_naming_the_file(tmp_path, file):
    _, path = saved(tmp_path)
    target = path / file
    target.write_bytes(target.read_bytes()[: len(target.read_bytes()) // 2])
    with pytest.raises(errors.DataLossError, match=file.replace(".", r"\.")):
        keras.models.load_model(path)


def test_flipped_byte_in_weights_is_data_loss(tmp_path):
    _, path = saved(tmp_path)
    data = bytearray((path / "weights.npz").read_bytes())
    data[-40] ^= 0xFF
    (path / "weights.npz").write_bytes(bytes(data))
    with pytest.raises(errors.DataLossError, match="SHA-256"):
        keras.models.load_model(path)


def test_failed_save_leaves_previous_model_intact(tmp_path, monkeypatch):
    model, path = saved(tmp_path)
    before = {f: (path / f).read_bytes() for f in os.listdir(path)}
    model.layers[0].kernel.assign(np.full((3, 2), 7.0, np.float32))

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(saving.container, "_swap_in", fail)
    with pytest.raises(OSError, match="disk full"):
        model.save(path)
    assert {f: (path / f).read_bytes() for f in os.listdir(path)} == before
    assert [p for p in os.listdir(tmp_path) if p.startswith(".")] == []  # no staging left
    loaded = keras.models.load_model(path)
    assert not np.array_equal(loaded.get_weights()[0], model.get_weights()[0])


def test_crash_between_renames_is_reported(tmp_path):
    _, path = saved(tmp_path)
    os.rename(path, tmp_path / ".m.old-abc")
    with pytest.raises(FileNotFoundError, match=r"\.m\.old-abc"):
        keras.models.load_model(path)


def test_overwrite_rules(tmp_path):
    model, path = saved(tmp_path)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        model.save(path, overwrite=False)
    other = tmp_path / "not_a_model"
    other.mkdir()
    (other / "precious.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="not a simdist saved model"):
        model.save(other)
    assert (other / "precious.txt").read_text() == "keep"


def test_custom_layer_needs_custom_objects(tmp_path):
    class Scale(layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    model = keras.Sequential([layers.Dense(2, input_shape=(3,)), Scale(3.0)])
    model.save(tmp_path / "m")
    with pytest.raises(ValueError, match="custom_objects"):
        keras.models.load_model(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m", custom_objects={"Scale": Scale})
    assert loaded.layers[1].factor == 3.0
    x = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


def test_nested_sequential(tmp_path):
    inner = keras.Sequential([layers.Dense(3), layers.ReLU()])
    model = keras.Sequential([layers.Dense(4, input_shape=(2,)), inner, layers.Dense(1)])
    model.save(tmp_path / "m")
    loaded = keras.models.load_model(tmp_path / "m")
    x = np.ones((2, 2), np.float32)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


@pytest.mark.parametrize("replicas", [0, 2])
def test_compiled_model_resumes_training_identically(tmp_path, replicas):
    x = np.random.default_rng(1).random((8, 3), dtype=np.float32)
    y = x.sum(axis=1, keepdims=True)
    strategy = (
        tf.distribute.MirroredStrategy([f"/gpu:{i}" for i in range(replicas)])
        if replicas
        else tf.distribute.get_strategy()
    )
    with strategy.scope():
        model = keras.Sequential([layers.Dense(2, input_shape=(3,)), layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    model.save(tmp_path / "m")
    assert (tmp_path / "m" / "optimizer.index").exists()
    with strategy.scope():
        loaded = keras.models.load_model(tmp_path / "m")
    assert int(loaded.optimizer.iterations.numpy()) == 4
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    loaded.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(loaded.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    uncompiled = keras.models.load_model(tmp_path / "m", compile=False)
    assert not getattr(uncompiled, "_is_compiled", False)
