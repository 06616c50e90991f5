"""Sequential: building at construction or first call, the Fashion-MNIST CNN's shapes, training."""

import numpy as np
import pytest

import simdist as tf
from simdist import keras
from simdist.core import random as core_random
from simdist.keras import backend, layers


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()


def create_model():
    """The custom-training tutorial's model, verbatim."""
    return keras.Sequential([
        layers.Conv2D(32, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ])  # fmt: skip


def test_input_shape_builds_at_construction():
    model = keras.Sequential([layers.Dense(2, input_shape=(5,))])
    assert model.built
    assert [v.name for v in model.trainable_variables] == ["dense/kernel:0", "dense/bias:0"]
    assert [tuple(v.shape) for v in model.weights] == [(5, 2), (2,)]


def test_input_layer_builds_and_is_not_listed():
    model = keras.Sequential(
        [layers.InputLayer(input_shape=(3,)), layers.Dense(4), layers.Dense(1)]
    )
    assert model.built and [x.name for x in model.layers] == ["dense", "dense_1"]
    assert model.count_params() == 3 * 4 + 4 + 4 + 1


def test_without_input_shape_builds_on_first_call():
    model = create_model()
    assert not model.built and model.weights == []
    out = model(np.zeros((2, 28, 28, 1), np.float32))
    assert out.shape == (2, 10) and model.built


def test_fashion_mnist_cnn_shapes_names_and_parameter_count():
    model = create_model()
    x = tf.constant(np.zeros((1, 28, 28, 1), np.float32))
    model(x)
    shapes = []
    for layer in model.layers:
        x = layer(x)
        shapes.append(tuple(x.shape)[1:])
    assert shapes == [(26, 26, 32), (13, 13, 32), (11, 11, 64), (5, 5, 64), (1600,), (64,), (10,)]
    assert [v.name for v in model.trainable_variables] == [
        "conv2d/kernel:0",
        "conv2d/bias:0",
        "conv2d_1/kernel:0",
        "conv2d_1/bias:0",
        "dense/kernel:0",
        "dense/bias:0",
        "dense_1/kernel:0",
        "dense_1/bias:0",
    ]
    assert model.count_params() == 320 + 18496 + 102464 + 650
    assert tuple(model.compute_output_shape((None, 28, 28, 1))) == (None, 10)


def test_add_pop_and_errors():
    model = keras.Sequential()
    model.add(layers.Dense(3, input_shape=(2,)))
    assert model.built
    model.add(layers.Dense(1))
    assert [tuple(w.shape) for w in model.weights][-2:] == [(3, 1), (1,)]
    with pytest.raises(TypeError, match="must be an instance of class Layer"):
        model.add("dense")
    with pytest.raises(ValueError, match="unique names"):
        model.add(layers.Dense(1, name="dense"))
    model.pop()
    assert len(model.layers) == 1


def test_training_flag_reaches_dropout_in_sequential():
    model = keras.Sequential([layers.Dropout(0.5, seed=2)])
    x = np.ones((20, 20), np.float32)
    np.testing.assert_array_equal(model(x).numpy(), x)
    assert (model(x, training=True).numpy() == 0).any()


def test_initial_values_are_reproducible_after_set_seed():
    core_random.set_seed(42)
    first = keras.Sequential([layers.Dense(3, input_shape=(4,))]).get_weights()
    core_random.set_seed(42)
    second = keras.Sequential([layers.Dense(3, input_shape=(4,))]).get_weights()
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def _synthetic_batch():
    """32 noisy 28x28 images; class k has a bright 6x6 patch at the k-th of 10 positions."""
    rng = np.random.default_rng(0)
    labels = np.arange(32) % 10
    images = 0.1 * rng.random((32, 28, 28, 1), dtype=np.float32)
    for i, k in enumerate(labels):
        r, c = 2 + 12 * (k // 5), 1 + 5 * (k % 5)
        images[i, r : r + 6, c : c + 6, 0] += 1.0
    return images, labels.astype(np.int64)


def test_fashion_mnist_cnn_trains_with_adam():
    core_random.set_seed(0)
    images, labels = _synthetic_batch()
    model = create_model()
    loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.Adam()
    losses = []
    for _ in range(20):
        with tf.GradientTape() as tape:
            loss = loss_object(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        losses.append(float(loss))
    assert losses[-1] < 0.7 * losses[0], losses
    assert int(optimizer.iterations.numpy()) == 20


def test_multi_worker_seed_custom_loop_runs_without_a_strategy():
    model = keras.Sequential([layers.Dense(2, input_shape=(5,))])
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    rng = np.random.default_rng(3)
    features = rng.random((1, 5)).astype(np.float32)
    labels = rng.integers(2, size=(1, 1))
    before = model.get_weights()[0].copy()
    with tf.GradientTape() as tape:
        logits = model(features, training=True)
        loss = keras.losses.sparse_categorical_crossentropy(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    assert loss.shape == (1,)
    assert not np.array_equal(model.get_weights()[0], before)
