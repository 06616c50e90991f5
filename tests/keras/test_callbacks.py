"""tf.keras.callbacks: hooks, History, EarlyStopping, LR scheduling, CSV, checkpoints, resume."""

import csv

import numpy as np
import pytest

import simdist as tf

RNG = np.random.default_rng(1)
X = RNG.normal(size=(40, 3)).astype("float32")
Y = (X @ np.array([[1.0], [2.0], [-1.0]], "float32")).astype("float32")
INIT = [
    RNG.normal(size=(3, 4)).astype("float32"),
    np.zeros(4, "float32"),
    RNG.normal(size=(4, 1)).astype("float32"),
    np.zeros(1, "float32"),
]


def _model(n=2, optimizer="adam", metrics=None):
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(n)])
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                tf.keras.layers.Dense(1),
            ]
        )
    model.set_weights(INIT)
    model.compile(optimizer=optimizer, loss="mse", metrics=metrics)
    return model


class Recorder(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None):
        self.calls.append("train_begin")

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch))

    def on_train_batch_end(self, batch, logs=None):
        self.calls.append(("batch_end", batch, sorted(logs)))

    def on_test_begin(self, logs=None):
        self.calls.append("test_begin")

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, sorted(logs)))

    def on_train_end(self, logs=None):
        self.calls.append("train_end")


def test_hook_order_and_history():
    model = _model()
    rec = Recorder()
    history = model.fit(
        X, Y, batch_size=20, epochs=2, verbose=0, callbacks=[rec], validation_data=(X, Y)
    )
    assert rec.calls[0] == "train_begin" and rec.calls[-1] == "train_end"
    assert rec.calls[1:6] == [
        ("epoch_begin", 0),
        ("batch_end", 0, ["loss"]),
        ("batch_end", 1, ["loss"]),
        "test_begin",
        ("epoch_end", 0, ["loss", "val_loss"]),
    ]
    assert history is model.history
    assert history.epoch == [0, 1]
    assert len(history.history["loss"]) == 2 and len(history.history["val_loss"]) == 2
    assert history.history["val_loss"][-1] == pytest.approx(model.evaluate(X, Y, verbose=0))


def test_early_stopping_restores_best_weights():
    model = _model(optimizer=tf.keras.optimizers.SGD(10.0))  # diverges: loss goes up
    stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=1, restore_best_weights=True)
    history = model.fit(X, Y, batch_size=40, epochs=20, verbose=0, callbacks=[stop])
    losses = history.history["loss"]
    assert len(losses) < 20 and stop.stopped_epoch == len(losses) - 1
    best = int(np.argmin(losses))
    assert stop.best_epoch == best


def test_early_stopping_patience_counts():
    model = _model()
    stop = tf.keras.callbacks.EarlyStopping(monitor="loss", min_delta=1e9, patience=2)
    history = model.fit(X, Y, batch_size=40, epochs=10, verbose=0, callbacks=[stop])
    assert len(history.history["loss"]) == 3


def test_learning_rate_scheduler_sets_and_logs(capsys):
    model = _model(optimizer=tf.keras.optimizers.SGD(0.1))
    sched = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5, verbose=1)
    history = model.fit(X, Y, batch_size=40, epochs=3, verbose=0, callbacks=[sched])
    np.testing.assert_allclose(history.history["lr"], [0.05, 0.025, 0.0125], rtol=1e-6)
    assert "LearningRateScheduler setting learning rate to 0.05" in capsys.readouterr().out


def test_csv_logger(tmp_path):
    path = tmp_path / "log.csv"
    model = _model()
    model.fit(
        X, Y, batch_size=20, epochs=2, verbose=0, callbacks=[tf.keras.callbacks.CSVLogger(path)]
    )
    model.fit(
        X,
        Y,
        batch_size=20,
        epochs=1,
        verbose=0,
        callbacks=[tf.keras.callbacks.CSVLogger(path, append=True)],
    )
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["epoch", "loss"]
    assert [r[0] for r in rows[1:]] == ["0", "1", "0"]
    assert float(rows[3][1]) == pytest.approx(model.history.history["loss"][0])
    assert len(rows) == 4


def test_model_checkpoint_every_epoch_and_best_only(tmp_path):
    model = _model()
    pattern = str(tmp_path / "w.{epoch:02d}")
    model.fit(
        X,
        Y,
        batch_size=20,
        epochs=2,
        verbose=0,
        callbacks=[tf.keras.callbacks.ModelCheckpoint(pattern, save_weights_only=True)],
    )
    assert (tmp_path / "w.01.index").exists() and (tmp_path / "w.02.index").exists()
    fresh = _model()
    fresh.load_weights(tf.train.latest_checkpoint(str(tmp_path)))  # w.02, as Keras records it
    for a, b in zip(fresh.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    best = tf.keras.callbacks.ModelCheckpoint(
        str(tmp_path / "best"), monitor="loss", save_best_only=True
    )
    model.fit(X, Y, batch_size=20, epochs=3, verbose=0, callbacks=[best])
    assert (tmp_path / "best.index").exists()
    assert best.best == pytest.approx(min(model.history.history["loss"]))


class Interrupt(tf.keras.callbacks.Callback):
    """Raises when epoch 2 (0-based) is about to run its step 3."""

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_begin(self, batch, logs=None):
        if (self.epoch, batch) == (2, 3):
            raise RuntimeError("simulated fault")


@pytest.mark.parametrize("save_freq", [1, "epoch"])
def test_backup_and_restore_bit_identical(tmp_path, save_freq):
    reference = _model(metrics=["mse"])
    reference.fit(X, Y, batch_size=8, epochs=4, verbose=0)
    backup = str(tmp_path / "backup")
    model = _model(metrics=["mse"])
    with pytest.raises(RuntimeError, match="simulated fault"):
        model.fit(
            X,
            Y,
            batch_size=8,
            epochs=4,
            verbose=0,
            callbacks=[
                tf.keras.callbacks.BackupAndRestore(backup, save_freq=save_freq),
                Interrupt(),
            ],
        )
    resumed = _model(metrics=["mse"])  # a fresh model and optimizer, as after a restart
    history = resumed.fit(
        X,
        Y,
        batch_size=8,
        epochs=4,
        verbose=0,
        callbacks=[tf.keras.callbacks.BackupAndRestore(backup, save_freq=save_freq)],
    )
    for a, b in zip(resumed.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    for key in ("loss", "mse"):
        assert history.history[key] == reference.history.history[key][2:]
    assert int(resumed.optimizer.iterations.numpy()) == int(reference.optimizer.iterations.numpy())
    assert not (tmp_path / "backup" / "chief").exists()


def test_bad_callback_arguments():
    with pytest.raises(ValueError, match="save_freq"):
        tf.keras.callbacks.BackupAndRestore("x", save_freq="sometimes")
    with pytest.raises(ValueError, match="mode"):
        tf.keras.callbacks.EarlyStopping(mode="up")
    with pytest.raises(TypeError, match="Callback"):
        _model().fit(X, Y, verbose=0, callbacks=[object()])


def test_batch_callbacks_fire_once_per_steps_per_execution():
    import numpy as np

    import simdist as tf

    calls = []

    class Record(tf.keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            calls.append(("begin", batch))

        def on_train_batch_end(self, batch, logs=None):
            calls.append(("end", batch, sorted(logs)))

        def on_test_batch_end(self, batch, logs=None):
            calls.append(("test_end", batch))

    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=3)
    x, y = np.zeros((8, 2), np.float32), np.zeros((8, 1), np.float32)
    model.fit(x, y, batch_size=1, epochs=1, verbose=0, callbacks=[Record()])
    assert calls == [
        ("begin", 0),
        ("end", 2, ["loss"]),
        ("begin", 3),
        ("end", 5, ["loss"]),
        ("begin", 6),
        ("end", 7, ["loss"]),
    ]  # as Keras: begin at the first step of each execution, end at its last
    calls.clear()
    model.evaluate(x, y, batch_size=2, verbose=0, callbacks=[Record()])
    assert calls == [("test_end", 2), ("test_end", 3)]


def _dropout_model():
    tf.random.set_seed(3)  # a restarted process starts from its seed again
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(8, activation="relu", input_shape=(3,)),
                tf.keras.layers.Dropout(0.5),
                tf.keras.layers.Dense(1),
            ]
        )
    model.compile(optimizer="adam", loss="mse")
    return model


def test_backup_and_restore_resumes_dropout_exactly(tmp_path):
    reference = _dropout_model()
    reference.fit(X, Y, batch_size=8, epochs=4, verbose=0)
    backup = str(tmp_path / "backup")
    model = _dropout_model()
    with pytest.raises(RuntimeError, match="simulated fault"):
        model.fit(
            X,
            Y,
            batch_size=8,
            epochs=4,
            verbose=0,
            callbacks=[tf.keras.callbacks.BackupAndRestore(backup, save_freq=1), Interrupt()],
        )
    resumed = _dropout_model()
    resumed.fit(
        X,
        Y,
        batch_size=8,
        epochs=4,
        verbose=0,
        callbacks=[tf.keras.callbacks.BackupAndRestore(backup, save_freq=1)],
    )
    for a, b in zip(resumed.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)  # the dropout masks after the restart repeat
