"""Keras 2's utilities without TF: pad_sequences and timeseries_dataset_from_array (their
errors), the score metrics (state, reset, configs, compile by class), CosineDecayRestarts
(config, an optimizer's schedule), the experimental aliases."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from simdist.keras import backend


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: tf.keras.utils.pad_sequences(5), "iterable"),
        (lambda: tf.keras.utils.pad_sequences([1, 2]), "non-iterable"),
        (lambda: tf.keras.utils.pad_sequences([[1]], padding="mid"), "Padding type"),
        (lambda: tf.keras.utils.pad_sequences([[1]], truncating="mid"), "Truncating type"),
        (lambda: tf.keras.utils.pad_sequences([["a"]], value="x"), "dtype=object"),
        (lambda: tf.keras.utils.pad_sequences([[[1, 2]], [[1]]]), "Shape of sample"),
    ],
)
def test_pad_sequences_refuses_as_keras(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_pad_sequences_of_strings_with_object_dtype():
    out = tf.keras.utils.pad_sequences([["a", "b"], ["c"]], dtype=object, value="-")
    assert out.tolist() == [["a", "b"], ["-", "c"]]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        (dict(start_index=-1), "start_index"),
        (dict(start_index=20), "start_index"),
        (dict(start_index=5, end_index=4), "end_index"),
        (dict(end_index=30), "end_index"),
        (dict(sampling_rate=0), "sampling_rate"),
        (dict(sequence_stride=25), "sequence_stride"),
    ],
)
def test_timeseries_refuses_as_keras(kwargs, words):
    with pytest.raises(ValueError, match=words):
        tf.keras.utils.timeseries_dataset_from_array(np.arange(20), None, 3, **kwargs)


def test_timeseries_shuffle_is_reproducible_and_keeps_pairs():
    data, targets = np.arange(30), np.arange(30) * 2

    def pairs(seed):
        ds = tf.keras.utils.timeseries_dataset_from_array(
            data, targets, 4, batch_size=5, shuffle=True, seed=seed
        )
        return [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]

    first = pairs(3)
    assert first == pairs(3)
    flat = [(w, t) for xs, ys in first for w, t in zip(xs, ys, strict=True)]
    assert sorted(w[0] for w, _ in flat) == list(range(27))
    assert all(t == 2 * w[0] for w, t in flat)


def test_metrics_accumulate_reset_and_rebuild_from_config():
    f1 = tf.keras.metrics.F1Score(average="macro", threshold=0.5)
    y, p = np.array([[1, 0], [0, 1]], "float32"), np.array([[0.9, 0.1], [0.7, 0.8]], "float32")
    f1.update_state(y, p)
    first = float(f1.result())
    f1.update_state(y, p)
    assert float(f1.result()) == pytest.approx(first)
    f1.reset_state()
    assert float(f1.result()) == 0.0
    again = tf.keras.metrics.F1Score.from_config(f1.get_config())
    assert again.get_config() == f1.get_config()
    r2 = tf.keras.metrics.R2Score()
    r2.update_state(np.array([[1.0], [2.0], [3.0]], "float32"), np.array([[1.0], [2.0], [3.0]]))
    assert float(r2.result()) == 1.0
    assert type(tf.keras.metrics.deserialize(tf.keras.metrics.serialize(r2))) is type(r2)


def test_metric_state_is_sync_on_read_under_mirrored_strategy():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        miou = tf.keras.metrics.MeanIoU(3)
    assert miou.total_cm.synchronization == tf.VariableSynchronization.ON_READ
    labels = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant([[0, 1], [2, 2]][ctx.replica_id_in_sync_group])
    )
    strategy.run(lambda t: miou.update_state(t, t), args=(labels,))
    np.testing.assert_array_equal(np.asarray(miou.total_cm), np.diag([1.0, 1.0, 2.0]))
    assert float(miou.result()) == 1.0


def test_fit_reports_the_score_metrics():
    x = np.random.default_rng(0).standard_normal((16, 3)).astype("float32")
    y = np.eye(2, dtype="float32")[(x[:, 0] > 0).astype(int)]
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, "softmax")])
    metrics = [tf.keras.metrics.F1Score(average="macro"), tf.keras.metrics.R2Score()]
    model.compile("sgd", "categorical_crossentropy", metrics=metrics)
    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert {"f1_score", "r2_score"} <= set(history.history)


def test_cosine_decay_restarts_config_and_optimizer():
    schedules = tf.keras.optimizers.schedules
    schedule = schedules.CosineDecayRestarts(0.1, 10, t_mul=1.5, m_mul=0.9, alpha=0.01)
    assert float(schedule(0)) == pytest.approx(0.1)
    again = schedules.deserialize(schedules.serialize(schedule))
    assert again.get_config() == schedule.get_config()
    assert [float(again(s)) for s in range(40)] == [float(schedule(s)) for s in range(40)]
    optimizer = tf.keras.optimizers.SGD(learning_rate=schedule)
    restored = tf.keras.optimizers.SGD.from_config(optimizer.get_config())
    assert type(restored.learning_rate) is schedules.CosineDecayRestarts


def test_experimental_aliases():
    experimental = tf.keras.optimizers.experimental
    for name in ("Adam", "SGD", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam",
                 "Ftrl", "Optimizer"):  # fmt: skip
        assert getattr(experimental, name) is getattr(tf.keras.optimizers, name)
    with pytest.raises(AttributeError, match="Adafactor is not yet in simdist"):
        experimental.Adafactor  # noqa: B018
    with pytest.warns(UserWarning, match="deprecated"):
        callback = tf.keras.callbacks.experimental.BackupAndRestore("/tmp/backup")
    assert isinstance(callback, tf.keras.callbacks.BackupAndRestore)
    assert tf.keras.preprocessing.sequence.pad_sequences is tf.keras.utils.pad_sequences
    assert (
        tf.keras.preprocessing.timeseries_dataset_from_array
        is tf.keras.utils.timeseries_dataset_from_array
    )


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: tf.keras.metrics.FBetaScore(average="mean"), "average"),
        (lambda: tf.keras.metrics.FBetaScore(beta=2), "beta"),
        (lambda: tf.keras.metrics.FBetaScore(beta=-1.0), "> 0"),
        (lambda: tf.keras.metrics.F1Score(threshold=1.5), "threshold"),
        (lambda: tf.keras.metrics.R2Score(class_aggregation="median"), "class_aggregation"),
        (lambda: tf.keras.metrics.R2Score(num_regressors=-1), "num_regressors"),
        (lambda: tf.keras.metrics.F1Score().update_state([1.0, 0.0], [0.3, 0.2]), "2D"),
    ],
)
def test_metrics_refuse_as_keras(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_mean_iou_refuses_out_of_range_classes():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"range \[0, 3\)"):
        tf.keras.metrics.MeanIoU(3).update_state([0, 3], [0, 1])


def test_a_model_compiled_with_the_new_metrics_and_schedule_saves_and_loads(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, "softmax")])
    schedule = tf.keras.optimizers.schedules.CosineDecayRestarts(0.1, 5)
    metrics = [tf.keras.metrics.F1Score(average="weighted"), tf.keras.metrics.MeanIoU(2)]
    model.compile(tf.keras.optimizers.SGD(schedule), "categorical_crossentropy", metrics=metrics)
    model.save(tmp_path / "m")
    loaded = tf.keras.models.load_model(tmp_path / "m")
    assert type(loaded.optimizer.learning_rate) is tf.keras.optimizers.schedules.CosineDecayRestarts
    x = np.random.default_rng(1).standard_normal((8, 3)).astype("float32")
    y = np.eye(2, dtype="float32")[np.arange(8) % 2]
    logs = loaded.evaluate(x, y, verbose=0, return_dict=True)
    assert {"f1_score", "mean_io_u"} <= set(logs), logs
