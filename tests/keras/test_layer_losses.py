"""``add_loss`` in a call: per call, per replica thread, and feeding the training loss."""

from __future__ import annotations

import numpy as np

import simdist as tf


class Penalty(tf.keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(tf.reduce_sum(inputs))
        return inputs


def test_each_replica_sees_the_losses_of_its_own_call():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    layer = Penalty()
    parts = [np.full((1, 2), 1.0, "float32"), np.full((1, 2), 5.0, "float32")]
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(parts[ctx.replica_id_in_sync_group])
    )

    def step(x):
        layer(x)
        (loss,) = layer.losses
        return loss

    losses = strategy.experimental_local_results(strategy.run(step, args=(values,)))
    assert [float(v) for v in losses] == [2.0, 10.0]


def test_losses_outside_calls_stay_and_call_losses_are_replaced():
    layer = Penalty()
    layer.add_loss(lambda: tf.constant(0.5))
    layer(np.ones((1, 2), "float32"))
    layer(np.full((1, 3), 2.0, "float32"))
    assert sorted(float(v) for v in layer.losses) == [0.5, 6.0]


def test_fit_adds_call_losses_once_over_replicas():
    """The layer loss of each replica is divided by the replica count: one copy in all."""

    def run(devices):
        strategy = tf.distribute.MirroredStrategy(devices)
        with strategy.scope():
            x = tf.keras.Input((2,))
            model = tf.keras.Model(x, Penalty()(tf.keras.layers.Dense(1, use_bias=False)(x)))
            model.set_weights([np.array([[1.0], [2.0]], "float32")])
            model.compile(optimizer="sgd", loss="mse")
        data = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]], "float32")
        return model.evaluate(data, np.zeros((4, 1), "float32"), batch_size=4, verbose=0)

    one, two = run(["GPU:0"]), run(["GPU:0", "GPU:1"])
    outputs = np.array([1.0, 2.0, 3.0, 2.0])
    np.testing.assert_allclose(one, np.mean(outputs**2) + outputs.sum(), rtol=1e-6)
    # Two replicas: each adds the sum of ITS outputs / 2 (Keras 2 scales layer losses per
    # replica), so the total is the mean of the two halves' sums, not the sum of all.
    halves = outputs[:2].sum() / 2 + outputs[2:].sum() / 2
    np.testing.assert_allclose(two, np.mean(outputs**2) + halves, rtol=1e-6)
