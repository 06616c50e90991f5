"""The file names Keras users write: .keras, .weights.h5, SavedModel directories."""

import glob
import os

import numpy as np
import pytest

import simdist as tf
from simdist import errors
from simdist.keras import saving

keras = tf.keras


def _model(seed=0):
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(4,))])
    rng = np.random.default_rng(seed)
    model.set_weights([rng.random((4, 3), dtype=np.float32), rng.random(3, dtype=np.float32)])
    return model


def _data_and_index(directory, prefix):
    return sorted(n for n in os.listdir(directory) if n.startswith(prefix + "."))


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a.get_weights(), b.get_weights(), strict=True))


def test_keras_file_is_one_bundle_that_load_model_and_load_weights_read(tmp_path):
    model = _model()
    model.compile(optimizer="adam", loss="mse")
    path = str(tmp_path / "model.keras")
    model.save(path)
    assert os.listdir(tmp_path) == ["model.keras"]
    assert open(path, "rb").read().startswith(b"simdist-bundle 1 ")  # not a zip archive
    loaded = keras.models.load_model(path)
    assert _same(loaded, model) and loaded.optimizer.get_config()["name"] == "Adam"
    other = _model(seed=1)
    other.load_weights(path)
    assert _same(other, model)


def test_weights_h5_is_one_file_per_save_that_a_glob_finds(tmp_path):
    model = _model()
    for epoch in (1, 2):
        model.save_weights(str(tmp_path / f"ckpt_{epoch:04d}.weights.h5"))
    found = sorted(glob.glob(str(tmp_path / "ckpt_*.weights.h5")))
    assert [os.path.basename(p) for p in found] == ["ckpt_0001.weights.h5", "ckpt_0002.weights.h5"]
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(p) for p in found]
    other = _model(seed=1)
    other.load_weights(found[-1]).assert_consumed()
    assert _same(other, model)
    with pytest.raises(ValueError, match="not a saved model"):
        keras.models.load_model(found[-1])


def test_model_checkpoint_with_a_weights_h5_pattern_writes_files_a_glob_finds(tmp_path):
    model = _model()
    model.compile(optimizer="sgd", loss="mse")
    pattern = str(tmp_path / "ckpt_{epoch:04d}.weights.h5")
    callback = keras.callbacks.ModelCheckpoint(pattern, save_weights_only=True)
    x, y = np.ones((8, 4), np.float32), np.zeros((8, 3), np.float32)
    model.fit(x, y, epochs=2, batch_size=4, verbose=0, callbacks=[callback])
    found = sorted(glob.glob(str(tmp_path / "ckpt_*.weights.h5")))
    assert [os.path.basename(p) for p in found] == ["ckpt_0001.weights.h5", "ckpt_0002.weights.h5"]
    restored = _model(seed=1)
    restored.load_weights(found[-1])
    assert _same(restored, model)


def test_model_checkpoint_into_a_directory_saves_into_it(tmp_path):
    model = _model()
    model.compile(optimizer="sgd", loss="mse")
    target = tmp_path / "best"
    target.mkdir()
    x, y = np.ones((8, 4), np.float32), np.zeros((8, 3), np.float32)
    callback = keras.callbacks.ModelCheckpoint(str(target), save_weights_only=True)
    model.fit(x, y, epochs=1, batch_size=4, verbose=0, callbacks=[callback])
    assert sorted(os.listdir(target)) == ["checkpoint", *_data_and_index(target, "weights")]
    restored = _model(seed=1)
    restored.load_weights(str(target)).assert_consumed()
    assert _same(restored, model)
    full = tmp_path / "full"
    full.mkdir()  # an empty directory: the whole model is saved into it
    callback = keras.callbacks.ModelCheckpoint(str(full), save_weights_only=False)
    model.fit(x, y, epochs=1, batch_size=4, verbose=0, callbacks=[callback])
    assert _same(keras.models.load_model(str(full)), model)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a simdist saved model"):
        model.save(str(tmp_path / "other"))
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


def test_save_weights_into_a_directory_and_back(tmp_path):
    model = _model()
    model.save_weights(str(tmp_path / "d") + "/")
    assert "checkpoint" in os.listdir(tmp_path / "d")
    other = _model(seed=1)
    other.load_weights(str(tmp_path / "d")).assert_consumed()
    assert _same(other, model)


def test_a_path_without_suffix_is_a_directory_and_h5_a_bundle(tmp_path):
    model = _model()
    model.save(str(tmp_path / "saved_model"))
    assert sorted(os.listdir(tmp_path / "saved_model")) == [
        "config.json",
        "manifest.json",
        "weights.npz",
    ]
    model.save(str(tmp_path / "legacy.h5"))
    assert os.path.isfile(tmp_path / "legacy.h5")
    assert _same(keras.models.load_model(str(tmp_path / "legacy.h5")), model)
    with pytest.raises(FileExistsError, match="directory"):
        model.save(str(tmp_path / "saved_model"), save_format="keras")


def test_a_zip_keras_file_from_keras_is_refused_with_what_it_is(tmp_path):
    path = tmp_path / "from_keras.keras"
    path.write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(errors.DataLossError, match="not a simdist bundle"):
        keras.models.load_model(str(path))


def test_the_callback_helper_leaves_plain_prefixes_to_the_callback(tmp_path):
    model = _model()
    assert saving.save_for_callback(model, str(tmp_path / "plain"), True) is False
    assert os.listdir(tmp_path) == []
