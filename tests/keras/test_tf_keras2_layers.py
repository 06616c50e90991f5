"""Differential tests against TF 2.21 + tf_keras of the Keras 2 layers added for users'
programs (activation layers first), with the same weights: outputs, gradients, output shapes,
parameter counts, config round trips; and TF's configs and weights loaded in simdist.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.keras import tf_differential as tf_oracle
from tests.keras.keras2_cases import case_source

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

X = "inputs[0]"
_BOOL_MASK = "np.random.default_rng(5).random((2, 3, 5)) > 0.4"
# name: (layer expression, input shapes, call expression, mask literals)
CASES = {
    "leaky_relu": ("L.LeakyReLU()", [(2, 3, 4)], f"layer({X})", []),
    "leaky_relu_alpha": ("L.LeakyReLU(alpha=0.05)", [(2, 5)], f"layer({X})", []),
    "elu": ("L.ELU()", [(2, 3, 4)], f"layer({X})", []),
    "elu_alpha": ("L.ELU(alpha=0.4)", [(2, 3, 4)], f"layer({X})", []),
    "thresholded_relu": ("L.ThresholdedReLU(theta=0.3)", [(2, 6)], f"layer({X})", []),
    "softmax": ("L.Softmax()", [(2, 3, 5)], f"layer({X})", []),
    "softmax_axis1": ("L.Softmax(axis=1)", [(2, 3, 5)], f"layer({X})", []),
    "softmax_axes": ("L.Softmax(axis=[1, 2])", [(2, 3, 5)], f"layer({X})", []),
    "softmax_mask": ("L.Softmax()", [(2, 3, 5)], f"layer({X}, mask=masks[0])", [_BOOL_MASK]),
    "softmax_robust": (
        "L.Softmax(robust_masking=True)",
        [(2, 3, 5)],
        f"layer({X}, mask=masks[0])",
        [_BOOL_MASK],
    ),
    "prelu": ("L.PReLU(alpha_initializer='random_uniform')", [(2, 3, 4)], f"layer({X})", []),
    "prelu_shared": (
        "L.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.2), shared_axes=[1, 2])",
        [(2, 3, 4, 2)],
        f"layer({X})",
        [],
    ),
    "relu_all_options": (
        "L.ReLU(max_value=1.5, negative_slope=0.1, threshold=0.2)",
        [(2, 7)],
        f"layer({X})",
        [],
    ),
}


@pytest.fixture(scope="module")
def compared():
    sources = {name: case_source(name, *spec) for name, spec in CASES.items()}
    ours = {name: tf_oracle.run_simdist(src) for name, src in sources.items()}
    theirs, failures = tf_oracle.run_tf({n: (s, ours[n], 1) for n, s in sources.items()})
    return ours, theirs, failures


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_tf(compared, name):
    ours, theirs, failures = compared
    assert name not in failures, failures.get(name)
    tf_oracle.assert_match(name, ours[name], theirs[name], rtol=1e-5, atol=1e-5)


# The other direction: layers configured by tf_keras, rebuilt in simdist from TF's
# get_config() (a saved Keras 2 model's layer entries) and given TF's weights.
_FROM_TF = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        import json
        L = tf.keras.layers
        made = [eval(expr, {"L": L, "tf": tf}) for expr in EXPRS]
        out = {}
        for i, (layer, shape) in enumerate(zip(made, SHAPES)):
            x = np.random.default_rng(i).standard_normal(shape).astype("float32")
            result = layer(x)
            config = json.dumps(
                {"class_name": type(layer).__name__, "config": layer.get_config()},
                default=lambda v: dict(v) if hasattr(v, "keys") else list(v),
            )
            out[f"config{i}"] = np.frombuffer(config.encode(), np.uint8)
            out[f"weights{i}"] = [w.numpy() for w in layer.weights] or [np.zeros(0)]
            out[f"x{i}"] = x
            out[f"out{i}"] = result.numpy()
        return out
    """
)
FROM_TF = [
    ("L.LeakyReLU(0.2)", (2, 4)),
    ("L.ELU(0.7)", (2, 4)),
    ("L.ThresholdedReLU(0.5)", (2, 4)),
    ("L.Softmax(axis=(1, 2))", (2, 3, 4)),
    ("L.PReLU(alpha_initializer='ones', shared_axes=2)", (2, 3, 4)),
]


def from_tf_check(from_tf):
    """Run the TF side of ``from_tf`` and check each layer rebuilt in simdist."""
    import json

    import simdist

    source = _FROM_TF.replace("EXPRS", repr([e for e, _ in from_tf])).replace(
        "SHAPES", repr([s for _, s in from_tf])
    )
    theirs, failures = tf_oracle.run_tf({"from_tf": (source, {}, 1)})
    assert not failures, failures
    result = theirs["from_tf"]
    for i in range(len(from_tf)):
        entry = json.loads(bytes(result[f"config{i}"][0]).decode())
        layer = getattr(simdist.keras.layers, entry["class_name"]).from_config(entry["config"])
        x = result[f"x{i}"][0]
        layer(x)
        layer.set_weights([w for w in result[f"weights{i}"] if w.size])
        np.testing.assert_allclose(
            np.asarray(layer(x)),
            result[f"out{i}"][0],
            rtol=1e-5,
            atol=1e-6,
            err_msg=from_tf[i][0],
        )


def test_tf_keras_configs_and_weights_load_in_simdist():
    from_tf_check(FROM_TF)
