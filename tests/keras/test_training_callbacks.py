"""ReduceLROnPlateau, TerminateOnNaN, TensorBoard and ModelCheckpoint's file names.

ReduceLROnPlateau and TerminateOnNaN run one program on simdist and on TensorFlow 2.21 +
tf_keras; TensorBoard's event files are read back by TensorFlow's own reader.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tf_oracle

import simdist as tf

RNG = np.random.default_rng(3)
X = RNG.normal(size=(16, 3)).astype("float32")
Y = (X @ np.array([[1.0], [2.0], [-1.0]], "float32")).astype("float32")
KERNEL = RNG.normal(size=(3, 1)).astype("float32")


def _model(optimizer="sgd", n=1):
    strategy = tf_oracle.simdist_strategy(n)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        model.compile(optimizer=optimizer, loss="mse")
    model.set_weights([KERNEL, np.zeros(1, "float32")])
    return model


def callbacks_program(tf, make_strategy, payload):
    out = {}
    for case in payload["plateau_cases"]:
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.build((None, 3))
        model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.5), loss="mse")
        callback = tf.keras.callbacks.ReduceLROnPlateau(**case["kwargs"])
        callback.set_model(model)
        callback.on_train_begin({})
        rates, logged = [], []
        for epoch, value in enumerate(case["values"]):
            logs = {case["kwargs"].get("monitor", "val_loss"): value}
            callback.on_epoch_end(epoch, logs)
            rates.append(float(np.asarray(model.optimizer.learning_rate.numpy())))
            logged.append(float(logs["lr"]))
        out[f"plateau/{case['name']}/lr"] = np.array(rates)
        out[f"plateau/{case['name']}/logged"] = np.array(logged)
    x = np.array(payload["x"], np.float32)
    x[9, 0] = np.inf  # the batch of examples 8..11 makes the loss infinite
    y = np.array(payload["y"], np.float32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.build((None, 3))
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(
        x, y, batch_size=4, epochs=3, verbose=0, shuffle=False,
        callbacks=[tf.keras.callbacks.TerminateOnNaN()],
    )  # fmt: skip
    out["nan/iterations"] = np.asarray(model.optimizer.iterations.numpy())
    out["nan/epochs_logged"] = np.asarray(len(history.history["loss"]))
    return out


@pytest.mark.tensorflow
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the inf batch
def test_reduce_lr_on_plateau_and_terminate_on_nan_match_tensorflow():
    payload = {
        "plateau_cases": [
            {"name": "default_patience_2", "kwargs": {"patience": 2, "factor": 0.5},
             "values": [1.0, 0.9, 0.95, 0.91, 0.9, 0.99, 0.8, 0.85, 0.85, 0.85]},
            {"name": "cooldown_min_lr", "kwargs": {"patience": 1, "factor": 0.1,
             "cooldown": 2, "min_lr": 0.004}, "values": [1.0] * 9},
            {"name": "max_mode_min_delta", "kwargs": {"monitor": "val_accuracy", "patience": 1,
             "min_delta": 0.05, "factor": 0.2}, "values": [0.5, 0.52, 0.6, 0.61, 0.7, 0.7]},
        ],
        "x": X.tolist(),
        "y": Y.tolist(),
    }  # fmt: skip
    theirs = tf_oracle.run_tensorflow(__file__, "callbacks_program", payload)
    ours = tf_oracle.run_simdist(callbacks_program, payload)
    tf_oracle.assert_same(ours, theirs)
    assert int(ours["nan/iterations"]) == 3  # stopped after the third batch


def test_reduce_lr_on_plateau_refuses_factor_one_and_schedules():
    with pytest.raises(ValueError, match="factor >= 1.0"):
        tf.keras.callbacks.ReduceLROnPlateau(factor=1.0)
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    model = _model(optimizer=tf.keras.optimizers.SGD(learning_rate=schedule))
    callback = tf.keras.callbacks.ReduceLROnPlateau(monitor="loss")
    callback.set_model(model)
    with pytest.raises(TypeError, match="not settable"):
        callback.on_epoch_end(0, {"loss": 1.0})


def test_reduce_lr_on_plateau_in_fit_logs_lr_in_history():
    model = _model(optimizer=tf.keras.optimizers.SGD(learning_rate=0.01))
    callback = tf.keras.callbacks.ReduceLROnPlateau(
        monitor="loss",
        patience=1,
        factor=0.5,
        min_delta=1e9,  # only epoch 0 improves
    )
    history = model.fit(X, Y, batch_size=8, epochs=4, verbose=0, callbacks=[callback])
    # logged before each epoch's reduction: reduced at the ends of epochs 1, 2 and 3
    assert history.history["lr"] == pytest.approx([0.01, 0.01, 0.005, 0.0025], rel=1e-6)
    assert float(model.optimizer.learning_rate.numpy()) == pytest.approx(0.00125, rel=1e-6)


def _events(logdir: str) -> list:
    """(tag, step) of every summary under logdir's event files, in order (our framing)."""
    from simdist.summary import event_file

    found = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        data = open(path, "rb").read()
        i = 0
        while i < len(data):
            length = int.from_bytes(data[i : i + 8], "little")
            body = data[i + 12 : i + 12 + length]
            assert int.from_bytes(data[i + 12 + length : i + 16 + length], "little") == (
                event_file.masked_crc32c(body)
            )
            found.append(body)
            i += 16 + length
    return found


def _tensorboard_fit(tmp_path, n=2, **kwargs):
    model = _model(optimizer=tf.keras.optimizers.SGD(0.01), n=n)
    board = tf.keras.callbacks.TensorBoard(log_dir=str(tmp_path / "logs"), **kwargs)
    model.fit(
        X, Y, batch_size=4, epochs=3, verbose=0, validation_data=(X[:8], Y[:8]), callbacks=[board]
    )
    return model


def test_tensorboard_writes_train_and_validation_event_files(tmp_path):
    _tensorboard_fit(tmp_path, update_freq=2, histogram_freq=2)
    train = _events(str(tmp_path / "logs" / "train"))
    validation = _events(str(tmp_path / "logs" / "validation"))
    assert b"brain.Event:2" in train[0] and b"brain.Event:2" in validation[0]
    train_tags = b"".join(train[1:])
    assert train_tags.count(b"epoch_loss") == 3
    assert train_tags.count(b"batch_loss") == 6  # 4 batches x 3 epochs, every second one
    assert train_tags.count(b"/histogram") == 4  # 2 weights at epochs 0 and 2
    assert b"".join(validation).count(b"evaluation_loss_vs_iterations") == 3
    assert b"".join(validation).count(b"epoch_loss") == 3


def test_tensorboard_refuses_bad_arguments():
    with pytest.raises(ValueError, match="update_freq"):
        tf.keras.callbacks.TensorBoard(update_freq="sometimes")
    with pytest.raises(NotImplementedError, match="embeddings_freq"):
        tf.keras.callbacks.TensorBoard(embeddings_freq=1)
    with pytest.raises(TypeError, match="Unrecognized arguments"):
        tf.keras.callbacks.TensorBoard(log_directory="x")


_TF_READER = r"""
import glob, json, os, sys
import tensorflow as tf
out = {}
for kind in ("train", "validation"):
    rows = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], kind, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                array = tf.make_ndarray(value.tensor)
                rows.append([value.tag, event.step, value.metadata.plugin_data.plugin_name,
                             array.tolist()])
    out[kind] = rows
print(json.dumps(out))
"""


@pytest.mark.tensorflow
@pytest.mark.slow
def test_tensorflow_reads_the_tensorboard_logs(tmp_path):
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("tensorflow is not installed (pip install 'simdist[tensorflow]')")
    schedule = tf.keras.optimizers.schedules.InverseTimeDecay(0.01, 1, 0.5)
    model = _model(optimizer=tf.keras.optimizers.SGD(schedule), n=2)
    board = tf.keras.callbacks.TensorBoard(
        log_dir=str(tmp_path / "logs"), update_freq="batch", histogram_freq=1
    )
    history = model.fit(
        X, Y, batch_size=8, epochs=2, verbose=0, validation_data=(X[:8], Y[:8]), callbacks=[board]
    )
    done = subprocess.run(
        [sys.executable, "-c", _TF_READER, str(tmp_path / "logs")],
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = json.loads(done.stdout.strip().splitlines()[-1])
    train = {(tag, step): value for tag, step, _, value in logs["train"]}
    for epoch, loss in enumerate(history.history["loss"]):
        assert train[("epoch_loss", epoch)] == pytest.approx(loss, rel=1e-6)
    assert sorted(step for tag, step in train if tag == "batch_loss") == [1, 2, 3, 4]
    lr = [train[("epoch_learning_rate", e)] for e in range(2)]
    assert lr == pytest.approx([0.01 / (1 + 0.5 * 2), 0.01 / (1 + 0.5 * 4)], rel=1e-6)
    kernel_histograms = [v for (tag, _), v in train.items() if tag.endswith("kernel_0/histogram")]
    assert len(kernel_histograms) == 2 and np.asarray(kernel_histograms[0]).shape == (30, 3)
    assert sum(np.asarray(kernel_histograms[0])[:, 2]) == 3  # the kernel's 3 values
    validation = {(tag, step): value for tag, step, _, value in logs["validation"]}
    for epoch, loss in enumerate(history.history["val_loss"]):
        assert validation[("epoch_loss", epoch)] == pytest.approx(loss, rel=1e-6)
        assert validation[("evaluation_loss_vs_iterations", 2 * (epoch + 1))] == pytest.approx(
            loss, rel=1e-6
        )
    plugins = {plugin for _, _, plugin, _ in logs["train"]}
    assert plugins == {"scalars", "histograms"}


def test_model_checkpoint_keras_file_names_go_through_save_weights(tmp_path, monkeypatch):
    model = _model()
    saved = []
    monkeypatch.setattr(model, "save_weights", lambda path, **kw: saved.append(("w", path)))
    monkeypatch.setattr(model, "save", lambda path, **kw: saved.append(("m", path)))
    weights = str(tmp_path / "ckpt_{epoch:04d}.weights.h5")
    whole = str(tmp_path / "model_{epoch}.keras")
    model.fit(
        X, Y, batch_size=8, epochs=2, verbose=0,
        callbacks=[
            tf.keras.callbacks.ModelCheckpoint(weights, save_weights_only=True),
            tf.keras.callbacks.ModelCheckpoint(whole),
        ],
    )  # fmt: skip
    assert saved == [
        ("w", str(tmp_path / "ckpt_0001.weights.h5")),
        ("m", str(tmp_path / "model_1.keras")),
        ("w", str(tmp_path / "ckpt_0002.weights.h5")),
        ("m", str(tmp_path / "model_2.keras")),
    ]
    assert not glob.glob(str(tmp_path / "*.index"))


def test_model_checkpoint_into_a_directory_saves_the_model_there(tmp_path):
    model = _model()
    target = tmp_path / "best_model"
    model.fit(
        X, Y, batch_size=8, epochs=2, verbose=0,
        callbacks=[tf.keras.callbacks.ModelCheckpoint(str(target) + os.sep, monitor="loss",
                                                      save_best_only=True)],
    )  # fmt: skip
    restored = tf.keras.models.load_model(str(target))
    for a, b in zip(restored.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert not (tmp_path / "best_model.index").exists()


def test_model_checkpoint_save_freq_counts_batches_across_epochs(tmp_path):
    model = _model()
    pattern = str(tmp_path / "w.{epoch}-{batch}")
    model.fit(
        X, Y, batch_size=4, epochs=2, verbose=0,  # 4 batches per epoch
        callbacks=[tf.keras.callbacks.ModelCheckpoint(pattern, save_freq=3,
                                                      save_weights_only=True)],
    )  # fmt: skip
    found = glob.glob(str(tmp_path / "w.*.index"))
    names = sorted(os.path.basename(p)[: -len(".index")] for p in found)
    assert names == ["w.1-3", "w.2-2"]  # batches 3 and 6 of 8


def test_model_checkpoint_period_and_unknown_arguments(tmp_path):
    model = _model()
    pattern = str(tmp_path / "p.{epoch}")
    checkpoint = tf.keras.callbacks.ModelCheckpoint(pattern, save_weights_only=True, period=2)
    model.fit(X, Y, batch_size=8, epochs=4, verbose=0, callbacks=[checkpoint])
    assert sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "*.index"))) == [
        "p.2.index",
        "p.4.index",
    ]
    with pytest.raises(TypeError, match="Unexpected keyword"):
        tf.keras.callbacks.ModelCheckpoint(pattern, every_so_often=True)


def test_callback_hooks_take_logs_none():
    callbacks = [
        tf.keras.callbacks.TerminateOnNaN(),
        tf.keras.callbacks.ReduceLROnPlateau(),
        tf.keras.callbacks.TensorBoard(),
        tf.keras.callbacks.ProgbarLogger(),
    ]
    for callback in callbacks:
        for hook in ("on_train_batch_begin", "on_test_batch_end", "on_predict_batch_end"):
            getattr(callback, hook)(0)  # logs default to None; these hooks do nothing here
    json.dumps([type(c).__name__ for c in callbacks])
