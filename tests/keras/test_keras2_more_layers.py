"""Keras 2's Dot, EinsumDense, Group/UnitNormalization, noise and spatial dropout layers,
UpSampling1D, ZeroPadding1D, global 3D pooling, StackedRNNCells and InputSpec, without TF:
save/load round trips, bad arguments, gradients against finite differences, compute
descriptions, the noise's distributions and per-replica draws under MirroredStrategy."""

from __future__ import annotations

import json

import numpy as np
import pytest

import simdist as tf
from simdist.core.compute_description import describe_compute
from simdist.keras import backend

L = tf.keras.layers


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()
    tf.random.set_seed(0)


# (a layer factory, one example's input shape)
LAYERS = [
    (lambda: L.EinsumDense("abc,cd->abd", (3, 5), bias_axes="d", activation="relu"), (3, 4)),
    (lambda: L.EinsumDense("...b,bc->...c", 5), (3, 4)),
    (lambda: L.GroupNormalization(2, epsilon=0.01), (3, 4)),
    (lambda: L.GroupNormalization(-1, axis=1, center=False), (4, 3)),
    (lambda: L.UnitNormalization(axis=[1, 2]), (3, 4)),
    (lambda: L.GaussianNoise(0.3, seed=1), (3, 4)),
    (lambda: L.GaussianDropout(0.2), (3, 4)),
    (lambda: L.AlphaDropout(0.2, seed=2), (3, 4)),
    (lambda: L.SpatialDropout1D(0.3), (3, 4)),
    (lambda: L.SpatialDropout2D(0.3, data_format="channels_first"), (2, 3, 4)),
    (lambda: L.UpSampling1D(3), (3, 4)),
    (lambda: L.ZeroPadding1D((2, 1)), (3, 4)),
    (lambda: L.UpSampling2D(2, interpolation="bilinear"), (2, 3, 4)),
    (lambda: L.GlobalAveragePooling3D(), (2, 2, 3, 4)),
    (lambda: L.GlobalMaxPooling3D(keepdims=True), (2, 2, 3, 4)),
    (lambda: L.RNN([L.SimpleRNNCell(3), L.LSTMCell(2)], return_sequences=True), (3, 4)),
    (lambda: L.Conv3D(3, (2, 3, 2), strides=(1, 2, 1), padding="same"), (3, 4, 5, 2)),
    (lambda: L.MaxPooling3D(2, padding="same"), (3, 4, 5, 2)),
    (lambda: L.AveragePooling3D((1, 2, 2), strides=1), (3, 4, 5, 2)),
]
IDS = [str(i) for i in range(len(LAYERS))]


def _x(shape, n=2, seed=0):
    return np.random.default_rng(seed).standard_normal((n, *shape)).astype("float32")


@pytest.mark.parametrize("make, shape", LAYERS, ids=IDS)
def test_save_and_load_model_round_trip(tmp_path, make, shape):
    model = tf.keras.Sequential([tf.keras.Input(shape), make()])
    x = _x(shape)
    expected = model.predict(x, verbose=0)
    model.save(tmp_path / "m")
    loaded = tf.keras.models.load_model(tmp_path / "m")
    normal = json.loads(json.dumps(model.layers[-1].get_config()))
    assert json.loads(json.dumps(loaded.layers[-1].get_config())) == normal
    np.testing.assert_allclose(loaded.predict(x, verbose=0), expected, rtol=1e-6, atol=1e-7)
    assert loaded.count_params() == model.count_params()


@pytest.mark.parametrize("make, shape", LAYERS, ids=IDS)
def test_compute_description_matches_the_layer(make, shape):
    layer = make()
    out = layer(_x(shape), training=True)
    description = describe_compute(layer, shape, batch=8, bytes_per_element=4)
    assert description is not None
    assert description.output_shape == tuple(out.shape[1:])
    assert list(description.params) == [
        int(np.prod(tuple(w.shape))) for w in layer.trainable_weights
    ]
    assert all(k.nbytes > 0 for k in (*description.forward, *description.input_grads))


def test_dot_is_priced_from_its_graph_node():
    from simdist.cost import layer_costs

    a, b = tf.keras.Input((3, 4)), tf.keras.Input((5, 4))
    model = tf.keras.Model([a, b], L.Dot(axes=(2, 2), normalize=True)([a, b]))
    costs = layer_costs(model, (3, 4), 8)
    dot = [c for c in costs if c.kind == "Dot"][0]
    assert dot.priced and dot.output_shape == (3, 5)
    assert sum(k.flops for k in dot.forward if k.name == "batch_dot") == 2.0 * 8 * 15 * 4


F64 = {"dtype": "float64"}
GRADIENT_CASES = {
    "dot": (lambda: L.Dot(axes=(2, 1), **F64), [(2, 3, 4), (2, 4, 2)]),
    "dot_normalize": (lambda: L.Dot(axes=1, normalize=True, **F64), [(2, 4), (2, 4)]),
    "einsum_dense": (
        lambda: L.EinsumDense("abc,cde->abde", (3, 2, 2), bias_axes="e", **F64),
        [(2, 3, 4)],
    ),  # fmt: skip
    "group_norm": (lambda: L.GroupNormalization(2, **F64), [(2, 3, 4)]),
    "unit_norm": (lambda: L.UnitNormalization(**F64), [(2, 3, 4)]),
    "upsampling2d_bilinear": (lambda: L.UpSampling2D(2, interpolation="bilinear"), [(1, 2, 3, 1)]),
    "conv3d": (lambda: L.Conv3D(2, 2, padding="same", **F64), [(1, 3, 3, 2, 2)]),
    "max_pooling3d": (lambda: L.MaxPooling3D(2, strides=1, **F64), [(1, 3, 3, 2, 2)]),
    "avg_pooling3d": (lambda: L.AveragePooling3D(2, padding="same", **F64), [(1, 3, 3, 3, 1)]),
    "stacked_cells": (
        lambda: L.RNN([L.SimpleRNNCell(2, **F64), L.GRUCell(2, **F64)], **F64),
        [(2, 3, 2)],
    ),  # fmt: skip
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(name):
    from tests.keras.test_layer_gradients import check_layer

    make, shapes = GRADIENT_CASES[name]
    arrays = [np.random.default_rng(i + 3).standard_normal(s) for i, s in enumerate(shapes)]
    if name == "upsampling2d_bilinear":  # float32 output: a float32 check
        layer = make()
        x = tf.constant(arrays[0].astype("float32"))
        with tf.GradientTape() as tape:
            tape.watch(x)
            total = tf.reduce_sum(layer(x) * np.arange(24, dtype="float32").reshape(1, 4, 6, 1))
        grad = tape.gradient(total, x).numpy()
        # each input pixel's gradient is the sum of the weights it got in the output
        eye = np.eye(6, dtype="float32").reshape(6, 1, 2, 3, 1)
        columns = [float(np.sum(layer(e).numpy() * np.arange(24).reshape(1, 4, 6, 1)))
                   for e in eye]  # fmt: skip
        np.testing.assert_allclose(grad.ravel(), columns, rtol=1e-5)
        return
    check_layer(make(), *arrays, training=False)


@pytest.mark.parametrize(
    "make, shape, check",
    [
        (lambda: L.GaussianNoise(0.5, seed=1), (4000,), lambda x, y: (y - x).std()),
        (lambda: L.GaussianDropout(0.2, seed=2), (4000,), lambda x, y: (y / x).std()),
    ],
    ids=["gaussian_noise", "gaussian_dropout"],
)
def test_noise_has_keras_2s_spread(make, shape, check):
    x = np.random.default_rng(0).uniform(1, 2, (1, *shape)).astype("float32")
    layer = make()
    y = layer(x, training=True).numpy()
    expected = 0.5 if isinstance(layer, L.GaussianNoise) else np.sqrt(0.2 / 0.8)
    assert abs(check(x, y) - expected) < 0.05 * expected
    np.testing.assert_array_equal(layer(x).numpy(), x)  # no training flag: the identity


def test_alpha_dropout_keeps_selu_mean_and_variance():
    x = np.random.default_rng(0).standard_normal((200, 500)).astype("float32")
    y = L.AlphaDropout(0.3, seed=4)(x, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1.0) < 0.02
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.3) * (1 + 0.3 * alpha_p**2)) ** -0.5
    dropped = np.isclose(y, a * alpha_p - a * alpha_p * 0.3)
    assert abs(dropped.mean() - 0.3) < 0.01


def test_spatial_dropout_drops_whole_channels():
    x = np.ones((64, 5, 3), "float32")
    y = L.SpatialDropout1D(0.5, seed=1)(x, training=True).numpy()
    per_channel = y.reshape(64, 5, 3)
    assert np.all(per_channel.min(axis=1) == per_channel.max(axis=1))  # one value per channel
    assert set(np.unique(y)) == {0.0, 2.0}
    images = np.ones((32, 3, 3, 4), "float32")
    z = L.SpatialDropout2D(0.5, seed=2)(images, training=True).numpy()
    assert np.all(z.min(axis=(1, 2)) == z.max(axis=(1, 2)))


@pytest.mark.parametrize(
    "make",
    [
        lambda: L.GaussianNoise(0.3, seed=1),
        lambda: L.GaussianDropout(0.3, seed=1),
        lambda: L.AlphaDropout(0.3, seed=1),
        lambda: L.SpatialDropout1D(0.5, seed=1),
    ],
    ids=["gaussian_noise", "gaussian_dropout", "alpha_dropout", "spatial_dropout1d"],
)
def test_each_replica_draws_its_own_noise(make):
    x = np.ones((4, 6, 3), "float32")

    def run():
        backend.clear_session()
        tf.random.set_seed(5)
        strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
        with strategy.scope():
            layer = make()
        same = strategy.experimental_distribute_values_from_function(lambda ctx: tf.constant(x))
        out = strategy.run(lambda v: layer(v, training=True), args=(same,))
        return [np.asarray(v) for v in strategy.experimental_local_results(out)]

    first, again = run(), run()
    assert not np.array_equal(first[0], first[1])
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_stacked_cells_return_state_is_grouped_per_cell():
    x = _x((4, 3))
    layer = L.RNN(L.StackedRNNCells([L.GRUCell(2), L.LSTMCell(3)]), return_state=True)
    out, gru_state, lstm_states = layer(x)
    assert tuple(out.shape) == (2, 3) and tuple(gru_state.shape) == (2, 2)
    assert [tuple(s.shape) for s in lstm_states] == [(2, 3), (2, 3)]
    np.testing.assert_array_equal(out.numpy(), lstm_states[0].numpy())
    assert layer.cell.state_size[0] == 2 and list(layer.cell.state_size[1]) == [3, 3]


class _NeedsRank3(L.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.input_spec = L.InputSpec(ndim=3, axes={-1: 4})

    def call(self, inputs):
        return inputs


def test_input_spec_is_checked_on_every_call():
    layer = _NeedsRank3(name="needs3")
    layer(np.zeros((2, 3, 4), "float32"))
    with pytest.raises(ValueError, match='layer "needs3" is incompatible.*expected ndim=3'):
        layer(np.zeros((2, 4), "float32"))
    with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 4"):
        layer(np.zeros((2, 3, 5), "float32"))
    spec = L.InputSpec(dtype="float32", shape=(None, 3), min_ndim=2)
    assert L.InputSpec.from_config(spec.get_config()).get_config() == spec.get_config()
    assert repr(L.InputSpec(ndim=2)) == "InputSpec(ndim=2)"
    with pytest.raises(ValueError, match="expects 2 input"):
        from simdist.keras.engine.input_spec import assert_input_compatibility

        assert_input_compatibility([spec, spec], np.zeros((1, 3)), "two")


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda: L.Dot(axes="1"), TypeError, "list or an int"),
        (lambda: L.Dot(axes=(1, 2, 3)), ValueError, "two elements"),
        (lambda: L.Dot(axes=1)([np.zeros((2, 3)), np.zeros((2, 4))]), ValueError, "Incompat"),
        (lambda: L.Dot(axes=0)([np.zeros((2, 3)), np.zeros((2, 3))]), ValueError, "axis 0"),
        (lambda: L.EinsumDense("ab,bc", 3)(np.zeros((2, 3))), ValueError, "Invalid einsum"),
        (lambda: L.EinsumDense("ab,bc->ad", 3)(np.zeros((2, 3))), ValueError, "Dimension 'd'"),
        (
            lambda: L.EinsumDense("ab,bc->ac", 3, bias_axes="x")(np.zeros((2, 3))),
            ValueError,
            "Bias dimension",
        ),  # fmt: skip
        (lambda: L.GroupNormalization(3)(np.zeros((2, 4))), ValueError, "multiple"),
        (lambda: L.GroupNormalization(8)(np.zeros((2, 4))), ValueError, "more than"),
        (lambda: L.UnitNormalization(axis="x"), TypeError, "axis"),
        (lambda: L.SpatialDropout2D(0.1, data_format="nhwc"), ValueError, "data_format"),
        (lambda: L.SpatialDropout1D(0.1)(np.zeros((2, 3))), ValueError, "ndim=3"),
        (lambda: L.UpSampling2D(interpolation="bicubic"), NotImplementedError, "simdist"),
        (lambda: L.UpSampling2D(interpolation="cubic"), ValueError, "interpolation"),
        (lambda: L.ZeroPadding1D((1, -1)), ValueError, "non-negative"),
        (lambda: L.StackedRNNCells([L.Dense(2)]), ValueError, "state_size"),
        (lambda: L.Conv3D(2, (2, 2)), ValueError, "3 positive integers"),
        (lambda: L.Conv3D(2, 2)(np.zeros((2, 3, 3, 3))), ValueError, "Conv3D expects"),
        (lambda: L.MaxPooling3D(2)(np.zeros((2, 3, 3, 3))), ValueError, "ndim=5"),
        (lambda: L.AveragePooling3D(2, padding="full"), ValueError, "padding"),
        (lambda: L.Conv3D(2, 2, data_format="channels_first"), NotImplementedError, "channels"),
    ],
)
def test_bad_arguments_raise_as_keras(make, error, words):
    with pytest.raises(error, match=words):
        make()


EMPTY = [
    (lambda: L.PReLU(), (3, 4)),
    (lambda: L.Softmax(), (3, 4)),
    (lambda: L.ELU(0.5), (3, 4)),
    (lambda: L.Resizing(2, 3), (4, 5, 2)),
    (lambda: L.CenterCrop(2, 3), (4, 5, 2)),
    (lambda: L.RandomCrop(2, 3), (4, 5, 2)),
    (lambda: L.RandomFlip(), (4, 5, 2)),
    (lambda: L.RandomRotation(0.2), (4, 5, 2)),
    (lambda: L.RandomZoom(0.2), (4, 5, 2)),
    (lambda: L.RandomTranslation(0.1, 0.1), (4, 5, 2)),
    (lambda: L.RandomContrast(0.2), (4, 5, 2)),
    (lambda: L.RandomBrightness(0.2), (4, 5, 2)),
    (lambda: L.EinsumDense("abc,cd->abd", (3, 2), bias_axes="d"), (3, 4)),
    (lambda: L.GroupNormalization(2), (3, 4)),
    (lambda: L.UnitNormalization(), (3, 4)),
    (lambda: L.GaussianNoise(0.1), (3, 4)),
    (lambda: L.AlphaDropout(0.2), (3, 4)),
    (lambda: L.SpatialDropout1D(0.2), (3, 4)),
    (lambda: L.UpSampling1D(2), (3, 4)),
    (lambda: L.Conv3D(2, 2), (3, 3, 3, 2)),
    (lambda: L.MaxPooling3D(), (2, 2, 2, 2)),
    (lambda: L.GlobalAveragePooling3D(), (2, 2, 2, 2)),
    (lambda: L.RNN([L.SimpleRNNCell(2), L.GRUCell(2)]), (3, 4)),
]


@pytest.mark.parametrize("make, shape", EMPTY, ids=[str(i) for i in range(len(EMPTY))])
def test_an_empty_batch_passes_with_gradients(make, shape):
    """A replica's share of a last partial batch can be empty (0 examples)."""
    layer = make()
    layer(_x(shape))  # build on a real batch
    x = tf.Variable(np.zeros((0, *shape), np.float32))
    with tf.GradientTape() as tape:
        y = layer(x, training=True)
        loss = tf.reduce_sum(y)
    assert y.shape[0] == 0
    assert tape.gradient(loss, x).shape == (0, *shape)
