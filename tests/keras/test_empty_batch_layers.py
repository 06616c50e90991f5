"""A replica's share of a last partial batch can be empty: layers take a batch of 0 images."""

import numpy as np

import simdist as tf


def test_pooling_and_flatten_of_an_empty_batch_with_gradients():
    x = tf.Variable(np.zeros((0, 4, 4, 2), np.float32))
    for layer, shape in (
        (tf.keras.layers.MaxPooling2D(), (0, 2, 2, 2)),  # was an IndexError
        (tf.keras.layers.Flatten(), (0, 32)),  # was reshape(x, [0, -1]): -1 not inferable
    ):
        with tf.GradientTape() as tape:
            y = layer(x)
            loss = tf.reduce_sum(y)
        assert y.shape == shape
        assert tape.gradient(loss, x).shape == (0, 4, 4, 2)
