"""The Keras 2 layers added for users' programs, without TF: save/load round trips, bad
arguments, compute descriptions, and behaviour under MirroredStrategy."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from simdist.core.compute_description import describe_compute
from simdist.keras import backend

L = tf.keras.layers


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()


# (a layer factory, one example's input shape)
LAYERS = [
    (lambda: L.LeakyReLU(0.1), (3, 4)),
    (lambda: L.ELU(0.5), (3, 4)),
    (lambda: L.ThresholdedReLU(0.2), (3, 4)),
    (lambda: L.Softmax(axis=[1, 2]), (3, 4)),
    (lambda: L.PReLU(alpha_initializer="ones", shared_axes=[1]), (3, 4)),
]
IDS = [str(i) for i in range(len(LAYERS))]


@pytest.mark.parametrize("make, shape", LAYERS, ids=IDS)
def test_save_and_load_model_round_trip(tmp_path, make, shape):
    model = tf.keras.Sequential([tf.keras.Input(shape), make()])
    x = np.random.default_rng(0).standard_normal((2, *shape)).astype("float32")
    expected = model(x).numpy()
    model.save(tmp_path / "m")
    loaded = tf.keras.models.load_model(tmp_path / "m")
    assert type(loaded.layers[-1]) is type(model.layers[-1])
    assert loaded.layers[-1].get_config() == model.layers[-1].get_config()
    np.testing.assert_array_equal(loaded(x).numpy(), expected)
    assert loaded.count_params() == model.count_params()


@pytest.mark.parametrize("make, shape", LAYERS, ids=IDS)
def test_compute_description_matches_the_layer(make, shape):
    layer = make()
    out = layer(np.zeros((2, *shape), "float32"))
    description = describe_compute(layer, shape, batch=8, bytes_per_element=4)
    assert description is not None
    assert description.output_shape == tuple(out.shape[1:])
    assert list(description.params) == [
        int(np.prod(tuple(w.shape))) for w in layer.trainable_weights
    ]
    kernels = (*description.forward, *description.weight_grads, *description.input_grads)
    assert kernels and all(k.flops > 0 and k.nbytes > 0 for k in kernels)


def _priced(layers, shape):
    """Every layer of ``layers`` priced by ``simdist.cost`` (raises for an unpriced one)."""
    from simdist.cost import layer_costs

    costs = layer_costs(tf.keras.Sequential([tf.keras.Input(shape), *layers]), shape, 8)
    assert len(costs) == len(layers)
    assert all(c.priced and sum(k.flops for k in c.forward) > 0 for c in costs)
    return costs


def test_cost_model_prices_the_activation_layers():
    layers = [L.Dense(4), L.PReLU(), L.LeakyReLU(), L.ELU(), L.ThresholdedReLU(), L.Softmax()]
    _priced(layers, (6,))


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda: L.LeakyReLU(alpha=None), ValueError, "cannot be None"),
        (lambda: L.ELU(alpha=None), ValueError, "cannot be None"),
        (lambda: L.ThresholdedReLU(theta=-1.0), ValueError, ">=0"),
        (lambda: L.ThresholdedReLU(theta=None), ValueError, "cannot be None"),
    ],
)
def test_bad_arguments_raise_as_keras(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_prelu_checks_its_input_and_shared_axes():
    layer = L.PReLU(shared_axes=[1])
    layer(np.zeros((2, 3, 4), "float32"))
    assert tuple(layer.alpha.shape) == (1, 4)
    layer(np.zeros((5, 7, 4), "float32"))  # the shared axis may change
    with pytest.raises(ValueError, match="axis -1|axis 2"):
        layer(np.zeros((2, 3, 5), "float32"))
    with pytest.raises(ValueError, match="shared_axes"):
        L.PReLU(shared_axes=[3])(np.zeros((2, 3, 4), "float32"))


def test_prelu_under_mirrored_strategy_sums_replica_gradients():
    x = np.random.default_rng(0).standard_normal((8, 3)).astype("float32")
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        layer = L.PReLU(alpha_initializer="ones")
        layer(x[:1])
    parts = np.split(x, 2)
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(parts[ctx.replica_id_in_sync_group])
    )

    def step(inputs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(inputs) ** 2)
        return tape.gradient(loss, layer.alpha)

    grads = strategy.reduce("SUM", strategy.run(step, args=(values,)), axis=None)
    negative = np.minimum(x, 0.0)
    np.testing.assert_allclose(grads.numpy(), (2 * negative * negative).sum(0), rtol=1e-5)


F64 = {"dtype": "float64"}
GRADIENT_CASES = {
    "leaky_relu": (lambda: L.LeakyReLU(0.2, **F64), (2, 5)),
    "elu": (lambda: L.ELU(0.6, **F64), (2, 5)),
    "thresholded_relu": (lambda: L.ThresholdedReLU(0.3, **F64), (2, 5)),
    "softmax_axes": (lambda: L.Softmax(axis=[1, 2], **F64), (2, 2, 3)),
    "prelu_shared": (lambda: L.PReLU(shared_axes=[1], **F64), (2, 3, 2)),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(name):
    from tests.keras.test_layer_gradients import check_layer

    make, shape = GRADIENT_CASES[name]
    check_layer(make(), np.random.default_rng(3).standard_normal(shape))


def test_discretization_adapted_bins_survive_save_and_load(tmp_path):
    data = np.random.default_rng(0).standard_normal((200, 1)).astype("float32")
    layer = L.Discretization(num_bins=4)
    layer.adapt(data)
    assert len(layer.bin_boundaries) == 3
    model = tf.keras.Sequential([tf.keras.Input((1,)), layer])
    expected = model.predict(data, verbose=0)
    assert expected.dtype == np.int64 and set(np.unique(expected)) == {0, 1, 2, 3}
    model.save(tmp_path / "m")
    loaded = tf.keras.models.load_model(tmp_path / "m")
    assert loaded.layers[-1].bin_boundaries == layer.bin_boundaries
    np.testing.assert_array_equal(loaded.predict(data, verbose=0), expected)
    assert describe_compute(layer, (1,), batch=8, bytes_per_element=4).output_shape == (1,)


def test_discretization_bins_and_encodings():
    layer = L.Discretization(bin_boundaries=[0.0, 1.0], output_mode="count")
    np.testing.assert_array_equal(layer([[-1.0, 0.0, 0.5, 1.0, 1.0]]).numpy(), [[1, 2, 2]])
    assert L.Discretization(bin_boundaries=[0.0]).compute_dtype == "int64"
    assert tf.keras.layers.experimental.preprocessing.Discretization is L.Discretization


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda: L.Discretization([0.0], num_bins=2), ValueError, "Both"),
        (lambda: L.Discretization(num_bins=-1), ValueError, "greater than or equal"),
        (lambda: L.Discretization([0.0], output_mode="tf_idf"), ValueError, "output_mode"),
        (lambda: L.Discretization([0.0], sparse=True), ValueError, "sparse"),
        (lambda: L.Discretization([0.0]).adapt([1.0, 2.0]), ValueError, "bin_boundaries"),
        (lambda: L.Discretization().adapt([1.0, 2.0]), ValueError, "num_bins"),
    ],
)
def test_discretization_refuses_as_keras(make, error, words):
    with pytest.raises(error, match=words):
        make()
