"""A compiled loss function that returns a scalar (rank 0): Keras 2's scaling per replica."""

from __future__ import annotations

import numpy as np

import simdist as tf

RNG = np.random.default_rng(3)
X = RNG.standard_normal((8, 3)).astype("float32")
Y = RNG.standard_normal((8, 1)).astype("float32")
SW = RNG.uniform(0.5, 2.0, 8).astype("float32")


def scalar_loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(y_true - y_pred))


def _step(replicas: int, sample_weight):
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        model.set_weights([np.full((3, 1), 0.5, "float32"), np.zeros(1, "float32")])
        model.compile(optimizer=tf.keras.optimizers.SGD(1.0), loss=scalar_loss)
    history = model.fit(
        X, Y, sample_weight=sample_weight, batch_size=8, epochs=1, shuffle=False, verbose=0
    )
    return history.history["loss"][0], model.get_weights()


def _expected(replicas: int, sample_weight):
    """Each replica's loss: its batch's scalar times its mean weight, over the replicas."""
    predictions = X @ np.full((3, 1), 0.5)
    weights = np.ones(8) if sample_weight is None else sample_weight.astype(np.float64)
    per_replica = []
    kernel_grad = np.zeros((3, 1))
    parts = zip(np.array_split(np.arange(8), replicas), np.split(weights, replicas), strict=True)
    for part, w in parts:
        error = predictions[part] - Y[part]
        per_replica.append(np.mean(error**2) * w.mean() / replicas)
        kernel_grad += X[part].T @ (2 * error / error.size) * w.mean() / replicas
    return sum(per_replica), np.full((3, 1), 0.5) - kernel_grad


def test_rank_0_loss_is_scaled_by_mean_weight_and_divided_by_replicas():
    for replicas in (1, 2):
        for sample_weight in (None, SW):
            loss, weights = _step(replicas, sample_weight)
            want_loss, want_kernel = _expected(replicas, sample_weight)
            np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
            np.testing.assert_allclose(weights[0], want_kernel, rtol=1e-5, atol=1e-6)
