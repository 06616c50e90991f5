"""A saved model keeps its compile state: loss objects, metrics, custom functions by name."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import simdist as tf

RNG = np.random.default_rng(5)
X = RNG.normal(size=(16, 3)).astype("float32")
Y = (X[:, :1] > 0).astype("float32")


def _model(loss, metrics):
    # a seeded initializer draws from a stateless generator: the global random stream that
    # other tests' unseeded layers use is left alone
    init = tf.keras.initializers.GlorotUniform(seed=7)
    layer = tf.keras.layers.Dense(1, "sigmoid", input_shape=(3,), kernel_initializer=init)
    model = tf.keras.Sequential([layer])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=loss, metrics=metrics)
    model.fit(X, Y, batch_size=8, epochs=1, verbose=0)
    return model


def test_loss_and_metric_objects_survive_save_and_load(tmp_path):
    model = _model(
        tf.keras.losses.BinaryCrossentropy(label_smoothing=0.1),
        ["accuracy", tf.keras.metrics.AUC(num_thresholds=50), "mse"],
    )
    path = str(tmp_path / "saved")
    model.save(path)
    config = json.load(open(os.path.join(path, "config.json")))["training_config"]
    assert config["loss"]["class_name"] == "BinaryCrossentropy"
    assert config["loss"]["config"]["label_smoothing"] == 0.1
    assert config["metrics"][0] == "accuracy"
    assert config["metrics"][2]["class_name"] == "MeanSquaredError"  # compile's 'mse'
    assert config["metrics"][2]["config"]["name"] == "mse"
    assert config["metrics"][1]["config"]["num_thresholds"] == 50
    restored = tf.keras.models.load_model(path)
    assert isinstance(restored.loss, tf.keras.losses.BinaryCrossentropy)
    assert restored.loss.get_config()["label_smoothing"] == 0.1
    assert [m.name for m in restored.metrics] == [m.name for m in model.metrics]
    assert int(restored.optimizer.iterations.numpy()) == 2  # the optimizer's state came back
    np.testing.assert_allclose(
        restored.evaluate(X, Y, verbose=0), model.evaluate(X, Y, verbose=0), rtol=1e-6
    )
    restored.fit(X, Y, batch_size=8, epochs=1, verbose=0)  # trains without compile()


def custom_hinge(y_true, y_pred):
    return tf.reduce_mean(tf.maximum(0.0, 1.0 - y_true * y_pred), axis=-1)


def test_custom_loss_functions_come_back_through_custom_objects(tmp_path):
    model = _model(custom_hinge, [])
    path = str(tmp_path / "saved")
    model.save(path)
    restored = tf.keras.models.load_model(path, custom_objects={"custom_hinge": custom_hinge})
    assert restored.loss is custom_hinge
    with pytest.warns(UserWarning, match="loaded uncompiled: .*custom_hinge"):
        uncompiled = tf.keras.models.load_model(path)
    assert not getattr(uncompiled, "_is_compiled", False)


@pytest.mark.parametrize(
    "loss",
    [
        tf.keras.losses.Huber(delta=0.5, reduction="sum"),
        tf.keras.losses.CosineSimilarity(axis=-1),
        tf.keras.losses.KLDivergence(),
    ],
)
def test_every_loss_class_round_trips_through_serialize(loss):
    back = tf.keras.losses.deserialize(tf.keras.losses.serialize(loss))
    assert type(back) is type(loss) and back.get_config() == loss.get_config()


def test_metric_objects_round_trip_through_serialize():
    for metric in (
        tf.keras.metrics.AUC(curve="PR", num_thresholds=10),
        tf.keras.metrics.Precision(thresholds=[0.3, 0.6], class_id=1),
        tf.keras.metrics.TopKCategoricalAccuracy(k=3),
        tf.keras.metrics.MeanSquaredError(),
    ):
        back = tf.keras.metrics.deserialize(tf.keras.metrics.serialize(metric))
        assert type(back) is type(metric) and back.get_config() == metric.get_config()
