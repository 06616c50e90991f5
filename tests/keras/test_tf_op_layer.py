"""TF ops on KerasTensors: TFOpLambda / SlicingOpLambda layers, training, config, errors."""

from __future__ import annotations

import inspect
import json
import sys

import numpy as np
import pytest

import simdist as tf
from simdist.core.convert import constant
from simdist.core.ops import array_ops, math_ops, nn_ops
from simdist.core.ops.creation_ops import zeros
from simdist.keras import model_config

L = tf.keras.layers
RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 4)).astype("float32")


def _model():
    x = tf.keras.Input((4,), name="x")
    h = L.Dense(8, name="dense")(x)
    h = tf.nn.relu(h)
    both = tf.concat([h, x * 2.0], -1)
    first, second = tf.split(both, 2, axis=1)
    mixed = first + second
    mean = tf.reduce_mean(mixed, axis=1, keepdims=True)
    column = tf.expand_dims(mixed[:, 0], -1)
    out = L.Dense(1, name="head")(tf.reshape(mixed - mean, [-1, 6]) / 2.0) + column
    return tf.keras.Model(x, out, name="ops")


def _by_hand(weights, x):
    """The model's computation with NumPy, from its weights."""
    k1, b1, k2, b2 = weights
    h = np.maximum(x @ k1 + b1, 0.0)
    both = np.concatenate([h, x * 2.0], -1)
    mixed = both[:, :6] + both[:, 6:]
    mean = mixed.mean(axis=1, keepdims=True)
    return ((mixed - mean) / 2.0) @ k2 + b2 + mixed[:, :1]


def test_ops_record_named_op_layers_with_shapes():
    model = _model()
    names = [(layer.name, type(layer).__name__) for layer in model.layers]
    assert names == [  # TF 2.21 + tf_keras's order and names
        ("x", "InputLayer"),
        ("dense", "Dense"),
        ("tf.nn.relu", "TFOpLambda"),
        ("tf.math.multiply", "TFOpLambda"),
        ("tf.concat", "TFOpLambda"),
        ("tf.split", "TFOpLambda"),
        ("tf.__operators__.add", "TFOpLambda"),
        ("tf.math.reduce_mean", "TFOpLambda"),
        ("tf.math.subtract", "TFOpLambda"),
        ("tf.reshape", "TFOpLambda"),
        ("tf.math.truediv", "TFOpLambda"),
        ("tf.__operators__.getitem", "SlicingOpLambda"),
        ("head", "Dense"),
        ("tf.expand_dims", "TFOpLambda"),
        ("tf.__operators__.add_1", "TFOpLambda"),
    ]
    split = model.get_layer("tf.split")._inbound_nodes[0].outputs
    assert [t.shape.as_list() for t in split] == [[None, 6], [None, 6]]
    column = model.get_layer("tf.__operators__.getitem")._inbound_nodes[0].outputs
    assert column.shape.as_list() == [None]
    assert model.output.shape.as_list() == [None, 1]
    assert model.count_params() == 4 * 8 + 8 + 6 + 1
    np.testing.assert_allclose(
        np.asarray(model(X)), _by_hand(model.get_weights(), X), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize(
    ("build", "symbol", "expected"),
    [
        (lambda s: 2.0 + s, "__operators__.add", lambda v: 2.0 + v),
        (lambda s: s - 1.0, "math.subtract", lambda v: v - 1.0),
        (lambda s: 1.0 - s, "math.subtract", lambda v: 1.0 - v),
        (lambda s: 3.0 * s, "math.multiply", lambda v: 3.0 * v),
        (lambda s: 2.0 / s, "math.truediv", lambda v: 2.0 / v),
        (lambda s: -s, "math.negative", lambda v: -v),
        (lambda s: abs(s), "math.abs", np.abs),
        (lambda s: s**2, "math.pow", lambda v: v**2),
        (lambda s: s // 0.5, "compat.v1.floor_div", lambda v: v // 0.5),
        (lambda s: s % 0.5, "math.floormod", lambda v: v % 0.5),
        (lambda s: s > 0.0, "math.greater", lambda v: v > 0.0),
        (lambda s: ~(s <= 0.0), "math.logical_not", lambda v: ~(v <= 0.0)),
        (lambda s: (s > 0.0) & (s < 1.0), "math.logical_and", lambda v: (v > 0) & (v < 1)),
        (lambda s: s @ tf.ones((4, 2)), "linalg.matmul", lambda v: v @ np.ones((4, 2))),
        (lambda s: s[:, tf.newaxis, 1:3], "__operators__.getitem", lambda v: v[:, None, 1:3]),
        (lambda s: s[..., ::2], "__operators__.getitem", lambda v: v[..., ::2]),
        (lambda s: tf.cast(s, tf.float16), "cast", lambda v: v.astype("float16")),
        (lambda s: tf.math.exp(s), "math.exp", np.exp),
        (lambda s: tf.sigmoid(s), "math.sigmoid", lambda v: 1 / (1 + np.exp(-v))),
        (lambda s: tf.transpose(s), "compat.v1.transpose", np.transpose),  # as TF records it
    ],
)
def test_operators_and_ops(build, symbol, expected):
    x = tf.keras.Input((4,))
    y = build(x)
    layer = y._keras_history[0]
    assert layer.get_config()["function"] == symbol
    model = tf.keras.Model(x, y)
    got = np.asarray(model(X))
    want = expected(X)
    assert got.dtype == want.dtype or got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-3 if got.dtype == np.float16 else 1e-6)


def test_image_resize_on_a_keras_tensor():
    x = tf.keras.Input((2, 4, 1))
    y = tf.image.resize(x, (4, 8))
    assert y._keras_history[0].name == "tf.image.resize"
    assert y.shape.as_list() == [None, 4, 8, 1]
    model = tf.keras.Model(x, y)
    image = RNG.random((2, 2, 4, 1)).astype("float32")
    np.testing.assert_allclose(np.asarray(model(image)), np.asarray(tf.image.resize(image, (4, 8))))


def test_gradients_flow_through_the_ops():
    model = _model()
    # weights from a fixed seed whose ReLU inputs all stay away from the kink by more than
    # the finite difference moves them (random weights put one within 1e-3 now and then)
    rng = np.random.default_rng(1)
    k1 = (rng.standard_normal((4, 8)) * 0.5).astype("float32")
    b1 = (rng.standard_normal(8) * 0.1).astype("float32")
    k2 = (rng.standard_normal((6, 1)) * 0.5).astype("float32")
    model.set_weights([k1, b1, k2, np.zeros(1, "float32")])
    assert np.min(np.abs(X @ k1 + b1)) > 10 * 1e-3 * np.max(np.abs(X))
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x) ** 2)
    grads = tape.gradient(loss, model.trainable_weights)
    assert all(g is not None for g in grads)
    weights = model.get_weights()
    step = 1e-3
    kernel = weights[0].astype(np.float64)
    numeric = np.zeros_like(kernel)
    for i in range(kernel.shape[0]):
        for j in range(kernel.shape[1]):
            for sign in (1, -1):
                moved = [w.astype(np.float64) for w in weights]
                moved[0][i, j] += sign * step
                numeric[i, j] += sign * np.sum(_by_hand(moved, X.astype(np.float64)) ** 2)
    np.testing.assert_allclose(np.asarray(grads[0]), numeric / (2 * step), rtol=2e-3, atol=2e-3)


def _fit(replicas: int) -> list[np.ndarray]:
    tf.keras.backend.clear_session()
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(replicas)])
    rng = np.random.default_rng(7)
    with strategy.scope():
        model = _model()
        model.set_weights(
            [rng.standard_normal(w.shape).astype("float32") * 0.3 for w in model.get_weights()]
        )
        model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    y = np.sum(X, axis=1, keepdims=True)
    history = model.fit(X, y, batch_size=6, epochs=3, verbose=0, shuffle=False)
    assert history.history["loss"][-1] < history.history["loss"][0]
    np.testing.assert_allclose(model.predict(X, verbose=0), np.asarray(model(X)), rtol=1e-6)
    return model.get_weights()


def test_fit_under_mirrored_strategy_matches_one_replica():
    one, two = _fit(1), _fit(2)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_summary_lists_the_op_layers(capsys):
    _model().summary()
    text = capsys.readouterr().out
    row = " tf.nn.relu (TFOpLambda)     (None, 8)                    0         ['dense[0][0]']"
    assert row in text
    assert "tf.__operators__.getitem (" in text and "SlicingOpLambda)" in text
    assert "Total params: 47" in text


def _round_trip(model):
    text = json.dumps(model_config.model_to_config(model), default=model_config.json_default)
    return model_config.model_from_config(json.loads(text), model_config.builtin_layers(), "t")


def test_config_in_keras_schema_and_round_trip(tmp_path):
    model = _model()
    config = model.get_config()
    assert set(config) == {"name", "trainable", "layers", "input_layers", "output_layers"}
    layers = {entry["name"]: entry for entry in config["layers"]}
    assert layers["tf.nn.relu"]["config"] == {
        "name": "tf.nn.relu", "trainable": True, "dtype": "float32", "function": "nn.relu"
    }  # fmt: skip
    # what tf_keras writes for the same model
    assert layers["tf.nn.relu"]["inbound_nodes"] == [["dense", 0, 0, {"name": None}]]
    assert layers["tf.math.multiply"]["inbound_nodes"] == [["x", 0, 0, {"y": 2.0, "name": None}]]
    assert layers["tf.concat"]["inbound_nodes"] == [
        [["tf.nn.relu", 0, 0, {"axis": -1}], ["tf.math.multiply", 0, 0, {"axis": -1}]]
    ]
    assert layers["tf.__operators__.add"]["inbound_nodes"] == [
        ["tf.split", 0, 0, {"y": ["tf.split", 0, 1], "name": None}]
    ]
    assert layers["tf.reshape"]["inbound_nodes"] == [["tf.math.subtract", 0, 0, {"shape": [-1, 6]}]]
    assert layers["tf.__operators__.getitem"]["inbound_nodes"] == [
        ["tf.__operators__.add", 0, 0,
         {"slice_spec": ({"start": None, "stop": None, "step": None}, 0)}]
    ]  # fmt: skip
    assert layers["head"]["inbound_nodes"] == [[["tf.math.truediv", 0, 0, {}]]]
    assert config["input_layers"] == [["x", 0, 0]]
    assert config["output_layers"] == [["tf.__operators__.add_1", 0, 0]]
    for rebuilt in (tf.keras.Model.from_config(config), _round_trip(model)):
        assert [x.name for x in rebuilt.layers] == [x.name for x in model.layers]
        rebuilt.set_weights(model.get_weights())
        np.testing.assert_array_equal(np.asarray(rebuilt(X)), np.asarray(model(X)))
    tf.keras.models.save_model(model, tmp_path / "saved")
    loaded = tf.keras.models.load_model(tmp_path / "saved")
    assert [type(x).__name__ for x in loaded.layers] == [type(x).__name__ for x in model.layers]
    np.testing.assert_array_equal(np.asarray(loaded(X)), np.asarray(model(X)))


def test_constants_ellipsis_and_dtypes_survive_json():
    x = tf.keras.Input((3, 4), name="x")
    y = tf.cast(1.0 - x[..., :2], tf.float16)
    model = tf.keras.Model(x, y)
    nodes = {e["name"]: e["inbound_nodes"] for e in model.get_config()["layers"]}
    assert nodes["tf.math.subtract"] == [
        ["_CONSTANT_VALUE", -1, 1.0, {"y": ["tf.__operators__.getitem", 0, 0], "name": None}]
    ]
    assert nodes["tf.cast"] == [["tf.math.subtract", 0, 0, {"dtype": tf.float16}]]
    rebuilt = _round_trip(model)
    value = RNG.standard_normal((2, 3, 4)).astype("float32")
    np.testing.assert_array_equal(np.asarray(rebuilt(value)), np.asarray(model(value)))
    assert rebuilt.output.dtype == tf.float16


def test_older_simdist_configs_still_load():
    config = {
        "name": "old", "trainable": True,
        "layers": [
            {"class_name": "InputLayer", "name": "a", "config": {
                "batch_input_shape": [None, 2], "dtype": "float32", "name": "a"}},
            {"class_name": "Dense", "name": "d", "config": {"name": "d", "units": 3}},
        ],
        "nodes": [{"layer": "d", "args": [{"keras_tensor": ["a", 0, 0]}], "kwargs": {}}],
        "inputs": {"keras_tensor": ["a", 0, 0]},
        "outputs": {"keras_tensor": ["d", 0, 0]},
    }  # fmt: skip
    model = tf.keras.Model.from_config(config)
    assert [x.name for x in model.layers] == ["a", "d"]
    assert model(np.ones((1, 2), "float32")).shape == (1, 3)


def test_errors():
    with pytest.raises(ValueError, match="TF symbol `nn.no_such_op` could not be found"):
        model_config.builtin_layers()["TFOpLambda"].from_config(
            {"name": "t", "trainable": True, "dtype": "float32", "function": "nn.no_such_op"}
        )
    x = tf.keras.Input((2,))
    variable = tf.Variable(np.ones(2, "float32"))
    model = tf.keras.Model(x, tf.math.multiply(x, variable))
    np.testing.assert_array_equal(np.asarray(model(np.ones((1, 2), "float32"))), [[1.0, 1.0]])
    with pytest.raises(TypeError, match="non-JSON-serializable arguments"):
        model.get_config()
    with pytest.raises(TypeError, match="symbolic"):
        np.asarray(x)
    with pytest.raises(TypeError, match="Python bool"):
        bool(x > 0.0)
    with pytest.raises(TypeError, match="unknown first dimension"):
        first, second = x
    first, second = tf.keras.Input((3,), batch_size=2)  # a known first dimension: x[0], x[1]
    assert first._keras_history[0].name.startswith("tf.__operators__.getitem")
    with pytest.raises(ValueError, match="Graph disconnected"):
        tf.keras.Model(tf.keras.Input((2,)), tf.nn.relu(x))
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        tf.gather(x, [1, 0])  # the batch axis: the one-example probe has no index 1
    if sys.version_info >= (3, 11):  # exception notes
        assert "running the op on zeros" in "".join(caught.value.__notes__)


def test_wrapped_functions_keep_name_doc_signature_and_identity():
    for public, original in (
        (tf.add, math_ops.add), (tf.nn.relu, nn_ops.relu), (tf.concat, array_ops.concat)
    ):  # fmt: skip
        assert public is not original and public.__wrapped__ is original
        assert public.__name__ == original.__name__
        assert public.__module__ == original.__module__
        assert public.__doc__ == original.__doc__
        assert inspect.signature(public) == inspect.signature(original)
    assert tf.add is tf.math.add and tf.sigmoid is tf.nn.sigmoid and tf.matmul is tf.linalg.matmul
    assert tf.constant is constant and tf.zeros is zeros  # no tensor arguments: not wrapped
    np.testing.assert_array_equal(np.asarray(tf.add(X, X)), X + X)


def test_generated_names_skip_names_given_explicitly():
    tf.keras.backend.clear_session()
    x = tf.keras.Input((2,))
    L.Activation("relu", name="tf.nn.relu")
    assert tf.nn.relu(x)._keras_history[0].name == "tf.nn.relu_1"
    assert tf.nn.relu(x)._keras_history[0].name == "tf.nn.relu_2"


def test_nested_model_nodes_count_from_one_and_round_trip():
    inner_input = tf.keras.Input((3,), name="inner_input")
    inner = tf.keras.Model(inner_input, tf.nn.relu(inner_input) * 0.5, name="inner")
    x = tf.keras.Input((3,), name="x")
    model = tf.keras.Model(x, inner(x) + inner(-x))
    config = model.get_config()
    nodes = {e["name"]: e["inbound_nodes"] for e in config["layers"]}
    assert nodes["inner"] == [[["x", 0, 0, {}]], [["tf.math.negative", 0, 0, {}]]]  # as TF
    assert nodes["tf.__operators__.add"] == [["inner", 1, 0, {"y": ["inner", 2, 0], "name": None}]]
    value = RNG.standard_normal((4, 3)).astype("float32")
    rebuilt = _round_trip(model)
    np.testing.assert_array_equal(np.asarray(rebuilt(value)), np.asarray(model(value)))
    np.testing.assert_allclose(
        np.asarray(model(value)), np.maximum(value, 0) * 0.5 + np.maximum(-value, 0) * 0.5
    )


def test_shapes_computed_in_the_graph_reach_later_ops():
    x = tf.keras.Input((4,))
    y = tf.reshape(x * 2.0, tf.shape(x))
    z = tf.reshape(x, [-1, tf.shape(x)[1] // 2, 2])
    assert y.shape.as_list() == [None, 4] and z.shape.as_list() == [None, 2, 2]
    model = _round_trip(tf.keras.Model(x, [y, z]))
    got_y, got_z = model(X)
    np.testing.assert_array_equal(np.asarray(got_y), X * 2.0)
    np.testing.assert_array_equal(np.asarray(got_z), X.reshape(-1, 2, 2))


def test_v2_ops_are_recorded_as_their_v1_op_as_tf_does():
    x = tf.keras.Input((4,), name="x")
    outputs = [tf.shape(x), tf.size(x), tf.squeeze(x[:, :1], axis=1), tf.gather(x, [0, 2], axis=1),
               tf.pad(x, [[0, 0], [1, 0]]), tf.transpose(x)]  # fmt: skip
    model = tf.keras.Model(x, outputs)
    nodes = {e["name"]: e["inbound_nodes"] for e in model.get_config()["layers"]}
    assert nodes["tf.compat.v1.shape"] == [["x", 0, 0, {"name": None, "out_type": tf.int32}]]
    assert nodes["tf.compat.v1.gather"] == [["x", 0, 0, {
        "indices": [0, 2], "validate_indices": None, "name": None, "axis": 1, "batch_dims": 0}]]
    assert nodes["tf.compat.v1.pad"] == [["x", 0, 0, {
        "paddings": [[0, 0], [1, 0]], "mode": "CONSTANT", "name": None, "constant_values": 0}]]
    rebuilt = _round_trip(model)
    for got, want in zip(rebuilt(X), model(X), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(model(X)[3]), X[:, [0, 2]])
