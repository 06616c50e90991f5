"""Every byte verified: a seeded sweep over every byte of a small checkpoint and saved model."""

import json
import os

import numpy as np
import pytest

import simdist as tf
from simdist import errors, train
from simdist.checkpoint import container, integrity
from simdist.checkpoint import format as ckpt_format

DETECTED = (errors.DataLossError, errors.NotFoundError, errors.UnimplementedError)


def _sweep(path, load, rng, step=1):
    """Change every ``step``-th byte of ``path`` (to a seeded other value), then truncate it
    at every such length; ``load()`` must raise a detection error each time. Returns the
    number of damaged files tried."""
    original = open(path, "rb").read()
    tried = 0
    try:
        for position in range(0, len(original), step):
            damaged = bytearray(original)
            damaged[position] = (original[position] + int(rng.integers(1, 256))) % 256
            with open(path, "wb") as f:
                f.write(bytes(damaged))
            with pytest.raises(DETECTED):
                load()
            tried += 1
        for length in range(0, len(original), step):
            with open(path, "wb") as f:
                f.write(original[:length])
            with pytest.raises(DETECTED):
                load()
            tried += 1
    finally:
        with open(path, "wb") as f:
            f.write(original)
    load()  # intact again: loads
    return tried


def test_every_byte_of_a_checkpoint_is_verified(tmp_path):
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([[3, 4]], dtype=tf.int32)
    prefix = train.Checkpoint(a=a, b=b).write(str(tmp_path / "small"))
    targets = (tf.Variable([0.0, 0.0]), tf.Variable([[0, 0]], dtype=tf.int32))

    def load():
        train.Checkpoint(a=targets[0], b=targets[1]).read(prefix)

    rng = np.random.default_rng(18)
    tried = 0
    for path in [prefix + ".index", *ckpt_format.data_files(prefix)]:
        tried += _sweep(path, load, rng)
        np.testing.assert_array_equal(targets[0].numpy(), [1.0, 2.0])  # only the intact load
        targets[0].assign([0.0, 0.0])
    assert tried > 1000


def test_editing_the_index_names_of_arrays_is_detected(tmp_path):
    # The reviewer's case: "array": "v1" -> "v0" restored a's value into b silently.
    a, b = tf.Variable([1.0]), tf.Variable([2.0])
    prefix = train.Checkpoint(a=a, b=b).write(str(tmp_path / "c"))
    text = open(prefix + ".index", encoding="utf-8").read()
    assert '"array": "v1"' in text
    with open(prefix + ".index", "w", encoding="utf-8") as f:
        f.write(text.replace('"array": "v1"', '"array": "v0"'))
    with pytest.raises(errors.DataLossError, match=r"small|c\.index"):
        train.Checkpoint(a=tf.Variable([0.0]), b=tf.Variable([0.0])).read(prefix)


def _small_model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(2,))])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(np.ones((4, 2), np.float32), np.zeros((4, 2), np.float32), verbose=0)
    return model


@pytest.mark.parametrize("name", ["m.keras", "m"])
def test_every_seventh_byte_of_a_saved_model_is_verified(tmp_path, name):
    # (every byte: scenarios/corruption_sweep.py)
    model = _small_model()
    path = str(tmp_path / name)
    model.save(path)
    files = (
        [path] if os.path.isfile(path) else sorted(os.path.join(path, f) for f in os.listdir(path))
    )
    rng = np.random.default_rng(15)
    tried = sum(_sweep(f, lambda: tf.keras.models.load_model(path), rng, step=7) for f in files)
    assert tried > 500


def _edit_config(path, edit):
    """Change config.json of a saved-model directory and re-sign the manifest, as a tool
    that knows the format would: only the schema can catch what it says."""
    config = json.loads(open(os.path.join(path, "config.json"), encoding="utf-8").read())
    edit(config)
    kind, members = container.read_members(path)
    members["config.json"] = json.dumps(config).encode("utf-8")
    container.write_members(path, kind, members, directory=True)


def test_a_renamed_training_config_is_refused_not_loaded_uncompiled(tmp_path):
    path = str(tmp_path / "m")
    _small_model().save(path)
    _edit_config(path, lambda c: c.update(trainig_config=c.pop("training_config")))
    with pytest.raises(errors.DataLossError, match="unknown fields.*trainig_config"):
        tf.keras.models.load_model(path)


def test_optimizer_hyperparameters_are_checked_against_the_schema(tmp_path):
    path = str(tmp_path / "m")
    _small_model().save(path)
    _edit_config(path, lambda c: c["training_config"]["optimizer"]["config"].update(beta_1="x"))
    with pytest.raises(errors.DataLossError, match="beta_1"):
        tf.keras.models.load_model(path)
    _edit_config(path, lambda c: c["training_config"]["optimizer"]["config"].update(beta_3=0.1))
    with pytest.raises(errors.DataLossError, match="beta_3"):
        tf.keras.models.load_model(path)


def test_one_changed_hyperparameter_byte_is_detected(tmp_path):
    path = str(tmp_path / "m")
    _small_model().save(path)
    config_path = os.path.join(path, "config.json")
    text = open(config_path, encoding="utf-8").read()
    assert '"beta_1": 0.9' in text
    with open(config_path, "w", encoding="utf-8") as f:
        f.write(text.replace('"beta_1": 0.9', '"beta_1": 0.8'))
    with pytest.raises(errors.DataLossError, match="config.json"):
        tf.keras.models.load_model(path)


def test_a_self_checksummed_document_is_still_json(tmp_path):
    raw = integrity.checked_document(json.dumps({"a": 1, "b": [2]}))
    assert json.loads(raw)["a"] == 1
    assert integrity.read_checked_document(raw, "x") == {"a": 1, "b": [2]}
    with pytest.raises(errors.DataLossError, match="SHA-256"):
        integrity.read_checked_document(raw.replace(b'"a": 1', b'"a": 2'), "x")


def test_leftovers_of_killed_saves_are_removed_by_the_next_save(tmp_path):
    v = tf.Variable([1.0])
    prefix = train.Checkpoint(v=v).write(str(tmp_path / "ck"))
    stale = [
        ".ck.index.abc123.tmp",
        "ck.data-0123456789abcdef.npz",
        ".ck.data-00112233445566aa.npz.x_9.tmp",
    ]
    for name in stale:
        (tmp_path / name).write_bytes(b"partial")
    (tmp_path / "other.data-0123456789abcdef.npz").write_bytes(b"not ours")
    train.Checkpoint(v=v).write(prefix)
    names = sorted(os.listdir(tmp_path))
    assert not any(name in names for name in stale)
    assert "other.data-0123456789abcdef.npz" in names
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    for name in [".m.keras.abc.tmp", ".m.keras.saving-x1", ".w.weights.h5.q.tmp"]:
        (tmp_path / name).write_bytes(b"partial")
    model.save(str(tmp_path / "m.keras"))
    model.save_weights(str(tmp_path / "w.weights.h5"))
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith(".")) == []


def test_keras_own_files_are_refused_with_a_clear_word(tmp_path):
    fake_hdf5 = tmp_path / "keras_made.h5"
    fake_hdf5.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(64))
    with pytest.raises(errors.DataLossError, match="not a simdist bundle.*HDF5"):
        tf.keras.models.load_model(str(fake_hdf5))
