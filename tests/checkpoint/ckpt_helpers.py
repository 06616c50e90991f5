"""Helpers for the checkpoint tests: a small CNN, a few training steps, a fake mirror."""

import numpy as np

import simdist as tf


def make_cnn(input_shape=None, dense_units=3):
    """The tutorial's model, shrunk: Conv2D, MaxPooling2D, Flatten, Dense."""
    first = (
        tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=input_shape)
        if input_shape is not None
        else tf.keras.layers.Conv2D(4, 3, activation="relu")
    )
    return tf.keras.Sequential(
        [
            first,
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(dense_units),
        ]
    )


def batch(seed=0, n=4):
    rng = np.random.RandomState(seed)
    images = rng.rand(n, 8, 8, 1).astype(np.float32)
    labels = rng.randint(0, 3, size=n)
    return images, labels


def train_steps(model, optimizer, steps=3, seed=0):
    """A few Adam steps of sparse cross-entropy on fixed random batches."""
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for step in range(steps):
        images, labels = batch(seed + step)
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))


def weights(model):
    return [np.array(w) for w in model.weights]


def slots(optimizer, model):
    return [
        np.array(optimizer.get_slot(v, name))
        for v in model.trainable_variables
        for name in optimizer.get_slot_names()
    ]


class FakeMirrored:
    """A duck-typed distributed variable: two copies, the checkpoint protocol of the lead."""

    trainable = True

    def __init__(self, value):
        self.copies = [tf.Variable(value), tf.Variable(value)]
        self.saved_through_protocol = 0

    @property
    def name(self):
        return self.copies[0].name

    @property
    def dtype(self):
        return self.copies[0].dtype

    @property
    def shape(self):
        return self.copies[0].shape

    def _to_tensor(self, dtype=None):
        return self.copies[0]._to_tensor(dtype)

    def numpy(self):
        raise AssertionError("a checkpoint must save through _checkpoint_value()")

    def _checkpoint_value(self):
        self.saved_through_protocol += 1
        return self.copies[0].numpy()

    def assign(self, value):
        for copy in self.copies:
            copy.assign(value)
        return self

    # the trackable protocol, as a strategy's variable implements it
    def _serialize_to_tensors(self):
        return {"VARIABLE_VALUE": np.asarray(self._checkpoint_value())}

    def _restore_from_tensors(self, tensors):
        self.assign(tensors["VARIABLE_VALUE"])
