"""TF ops on KerasTensors against TF 2.21 + tf_keras: one model source, both sides.

The same Functional model (Dense layers, TF ops, Python operators, slicing) is built on
simdist and on TF with simdist's weights: outputs, layer names and classes, the config
(Keras 2's schema, through JSON), ``summary()``'s text, ``fit`` under MirroredStrategy with 2
replicas, and the TF API name of every op simdist wraps must agree; the config TF writes
must load in simdist and give TF's outputs.
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import simdist
from simdist import symbolic_dispatch
from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

_MODEL = textwrap.dedent(
    """
    def build(tf):
        L = tf.keras.layers
        x = tf.keras.Input((4,), name="x")
        h = tf.nn.relu(L.Dense(8, name="dense")(x))
        both = tf.concat([h, x * 2.0], -1)
        first, second = tf.split(both, 2, axis=1)
        mixed = first + second
        mean = tf.reduce_mean(mixed, axis=1, keepdims=True)
        head = L.Dense(1, name="head")(tf.reshape(mixed - mean, [-1, 6]) / 2.0)
        ops = [
            head + tf.expand_dims(mixed[:, 0], -1), 2.0 + mixed, 1.0 - mixed, 3.0 * mixed,
            -mixed, abs(mixed), mixed ** 2, tf.cast(mixed > 0.0, "float32"),
            tf.cast((mixed > 0.0) & (mixed < 1.0), tf.float16), mixed[:, tf.newaxis, 1:3],
            mixed[..., ::2], mixed @ tf.ones((6, 2)), tf.math.exp(-tf.math.abs(mixed)),
            tf.sigmoid(mixed), tf.transpose(tf.matmul(mixed, tf.ones((6, 3)))),
            tf.nn.softmax(mixed), tf.image.resize(tf.reshape(both, [-1, 2, 6, 1]), (4, 3)),
            tf.math.reduce_max(mixed, axis=-1), tf.maximum(mixed, 0.5), tf.stack([mean, mean]),
        ]
        inner_input = tf.keras.Input((6,), name="inner_input")
        inner = tf.keras.Model(inner_input, tf.nn.relu(inner_input) * 0.5, name="inner")
        ops.append(inner(mixed) + inner(2.0 * mixed))  # a nested model called twice
        ops.append(tf.reshape(mixed * 2.0, tf.shape(mixed)))  # a shape computed in the graph
        ops += [  # TF's v2 ops that Keras records as their v1 op
            tf.shape(mixed, out_type="int64"), tf.squeeze(mean, axis=1),  # (TF fails to
            # rebuild a tf.size from its own config)
            tf.gather(mixed, [0, 2], axis=1), tf.gather(mixed, [0, 0]),
            tf.pad(mixed, [[0, 0], [1, 2]], constant_values=1.0), tf.tile(mixed, [1, 2]),
            tf.math.log(tf.math.square(mixed) + 1.0), tf.math.tanh(mixed),
        ]
        return tf.keras.Model(x, ops, name="ops")

    def shapes(tf, layer):
        outputs = layer._inbound_nodes[0].outputs
        return tf.nest.map_structure(lambda t: t.shape.as_list(), outputs)

    def case(tf, np, weights, devices):
        import json, re
        tf.keras.backend.clear_session()
        tf.random.set_seed(0)
        model = build(tf)
        if weights is not None:
            model.set_weights(weights)
        x = np.random.default_rng(0).standard_normal((5, 4)).astype("float32")
        lines = []
        model.summary(print_fn=lines.append, line_length=110)
        text = [re.sub(r" \\([0-9.]+ [KMG]?Byte\\)", "", line) for line in lines]
        if hasattr(tf, "sim"):
            from simdist.keras.model_config import json_default
            decode = json.loads
        else:  # what tf_keras's to_json / model_from_json use
            from tf_keras.src.saving.legacy.saved_model import json_utils
            json_default, decode = json_utils.get_json_type, json_utils.decode
        config = json.dumps(model.get_config(), default=json_default)
        rebuilt = tf.keras.Model.from_config(decode(config))
        rebuilt.set_weights(model.get_weights())
        return {
            "weights": model.get_weights(),
            "outputs": [np.asarray(o, np.float64) for o in model(x)],
            "rebuilt": [np.asarray(o, np.float64) for o in rebuilt(x)],
            "names": np.array([layer.name for layer in model.layers]),
            "classes": np.array([type(layer).__name__ for layer in model.layers]),
            "shapes": np.array([str(shapes(tf, layer)) for layer in model.layers]),
            "summary": np.array(text),
            "config": np.array([config]),
        }
    """
)

_FIT = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        strategy = tf.distribute.MirroredStrategy(
            devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
        rng = np.random.default_rng(1)
        x = rng.standard_normal((16, 4)).astype("float32")
        y = (x[:, :1] * 2.0 - x[:, 1:2]).astype("float32")
        with strategy.scope():
            inputs = tf.keras.Input((4,))
            h = tf.nn.tanh(L.Dense(6)(inputs))
            h = tf.concat([h, inputs[:, :2] * 0.5], axis=-1)
            out = L.Dense(1)(h - tf.reduce_mean(h, axis=1, keepdims=True)) + 0.1
            model = tf.keras.Model(inputs, out)
            if weights is not None:
                model.set_weights(weights)
            start = model.get_weights()
            model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        return {"weights": start, "loss": np.array(history.history["loss"]),
                "after": model.get_weights(), "predict": model.predict(x, verbose=0)}
    """
)

_NAMES = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        if hasattr(tf, "sim"):
            return {}
        from tensorflow.python.util.tf_export import get_canonical_name_for_symbol
        names = []
        for path in PATHS:
            symbol = tf
            for part in path.split("."):
                symbol = getattr(symbol, part, None)
            name = None if symbol is None else get_canonical_name_for_symbol(
                symbol, add_prefix_to_v1_names=True)  # as Keras names op layers
            names.append(f"{path}={name}")
        return {"names": np.array(names)}
    """
)


def _wrapped_paths() -> list[str]:
    import simdist.image
    import simdist.linalg
    import simdist.math
    import simdist.nn  # noqa: F401

    return sorted({p for w in symbolic_dispatch._wrappers.values() for p in w._tf_api_paths})


@pytest.fixture(scope="module")
def compared():
    names_source = f"PATHS = {_wrapped_paths()!r}\n" + _NAMES
    sources = {"model": (_MODEL, 1), "fit_2": (_FIT, 2), "names": (names_source, 1)}
    ours = {name: tf_oracle.run_simdist(src, n) for name, (src, n) in sources.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], n) for name, (src, n) in sources.items()}
    )
    return ours, theirs, failures


def _layers(config: dict) -> list[dict]:
    """Each layer's class, name and inbound nodes, and the whole config of the op layers."""
    out = []
    for entry in config["layers"]:
        kept = {k: entry[k] for k in ("class_name", "name", "inbound_nodes")}
        if entry["class_name"] in ("TFOpLambda", "SlicingOpLambda", "InputLayer"):
            kept["config"] = entry["config"]
        out.append(kept)
    return out


def test_model_outputs_names_summary_and_config_match_tf(compared):
    ours, theirs, failures = compared
    assert "model" not in failures, failures.get("model")
    mine, tf_side = ours["model"], theirs["model"]
    tf_oracle.assert_match("model", mine, tf_side, rtol=1e-5, atol=1e-6, skip=("weights", "config"))
    config = json.loads(str(mine["config"][0][0]))
    tf_config = json.loads(str(tf_side["config"][0][0]))
    assert _layers(config) == _layers(tf_config)
    for key in ("name", "input_layers", "output_layers"):
        assert config[key] == tf_config[key], key


def test_a_config_written_by_tf_keras_loads_and_gives_tfs_outputs(compared):
    ours, theirs, failures = compared
    assert "model" not in failures, failures.get("model")
    tf_config = json.loads(str(theirs["model"]["config"][0][0]))
    simdist.keras.backend.clear_session()
    model = simdist.keras.Model.from_config(tf_config)
    model.set_weights(ours["model"]["weights"])
    x = np.random.default_rng(0).standard_normal((5, 4)).astype("float32")
    for got, want in zip(model(x), theirs["model"]["outputs"], strict=True):
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-5, atol=1e-6)


def test_fit_under_mirrored_strategy_matches_tf(compared):
    ours, theirs, failures = compared
    assert "fit_2" not in failures, failures.get("fit_2")
    tf_oracle.assert_match("fit_2", ours["fit_2"], theirs["fit_2"], rtol=1e-4, atol=1e-5)


def test_every_wrapped_op_has_tfs_api_name(compared):
    _, theirs, failures = compared
    assert "names" not in failures, failures.get("names")
    directory = symbolic_dispatch._Directory()
    wrappers = {p: w for w in symbolic_dispatch._wrappers.values() for p in w._tf_api_paths}
    wrong = []
    for item in theirs["names"]["names"][0]:
        path, _, tf_name = str(item).partition("=")
        if tf_name == "None":
            continue  # not a TF name (simdist's own), or not exported by TF
        ours = directory.name_of(wrappers[path])
        if ours != tf_name:
            wrong.append(f"{path}: simdist {ours}, TF {tf_name}")
        assert directory.resolve(tf_name) is not None, tf_name
    assert not wrong, "\n".join(wrong)
