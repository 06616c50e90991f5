"""``tf.keras.optimizers.legacy`` against TF 2.21 + tf_keras's OptimizerV2 optimizers.

One program: for each legacy optimizer (with ``decay``, with the clip options together),
fixed weights and fixed gradients, four ``apply_gradients`` steps, under the default
strategy and under MirroredStrategy with 2 replicas; the weights after every step and
``iterations`` must match within float32 rounding (``rtol=1e-5, atol=1e-6``), and each
default-constructed optimizer's ``get_config()`` must be TF's exactly.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

CONFIGS = {
    "sgd": ("SGD", {"learning_rate": 0.1}),
    "sgd_nesterov_decay": (
        "SGD",
        {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True, "decay": 0.5},
    ),
    "adam_decay": ("Adam", {"learning_rate": 0.01, "decay": 0.1}),
    "adam_amsgrad": ("Adam", {"learning_rate": 0.01, "amsgrad": True}),
    "adagrad": ("Adagrad", {"learning_rate": 0.1}),
    "adadelta": ("Adadelta", {"learning_rate": 1.0}),
    "adamax": ("Adamax", {"learning_rate": 0.02}),
    "nadam": ("Nadam", {"learning_rate": 0.02}),
    "ftrl": ("Ftrl", {"learning_rate": 0.1, "l1_regularization_strength": 0.01}),
    "rmsprop": ("RMSprop", {"learning_rate": 0.01}),
    "rmsprop_centered": ("RMSprop", {"learning_rate": 0.01, "centered": True}),
    "rmsprop_momentum": ("RMSprop", {"learning_rate": 0.01, "momentum": 0.5}),
    "rmsprop_momentum_centered": (
        "RMSprop",
        {"learning_rate": 0.01, "momentum": 0.5, "centered": True},
    ),
    "sgd_clipvalue_and_clipnorm": (
        "SGD",
        {"learning_rate": 0.1, "clipvalue": 0.3, "clipnorm": 0.4},
    ),
    "adam_global_clipnorm": ("Adam", {"learning_rate": 0.01, "global_clipnorm": 0.5}),
}

PROGRAM = textwrap.dedent(
    """
    CONFIGS = json.loads(CONFIGS_JSON)

    def case(tf, np, weights, devices):
        out = {}
        for name, (cls, kwargs) in sorted(CONFIGS.items()):
            for replicas in (1, 2):
                strategy = (tf.distribute.MirroredStrategy(devices[:2]) if replicas == 2
                            else tf.distribute.get_strategy())
                with strategy.scope():
                    w = [tf.Variable([[0.5, -1.0], [2.0, 0.1]]), tf.Variable([0.3, -0.2])]
                    opt = getattr(tf.keras.optimizers.legacy, cls)(**kwargs)
                rng = np.random.default_rng(4)
                steps = [[rng.standard_normal((2, 2)).astype("float32"),
                          rng.standard_normal(2).astype("float32")] for _ in range(4)]
                after = []
                for grads in steps:
                    def step(gs=grads):
                        scale = 1.0 / replicas
                        opt.apply_gradients(
                            [(tf.constant(g * scale), v) for g, v in zip(gs, w)])
                    strategy.run(step)
                    after.extend(v.numpy() for v in w)
                out[f"{name}_{replicas}"] = after + [np.asarray(opt.iterations.numpy())]
        configs = {}
        for cls in ("SGD", "Adam", "Adagrad", "Adadelta", "Adamax", "Nadam", "RMSprop", "Ftrl"):
            config = getattr(tf.keras.optimizers.legacy, cls)().get_config()
            configs[cls] = {k: (round(v, 7) if isinstance(v, float) else v)
                            for k, v in config.items()}
        out["configs"] = [np.asarray(json.dumps(configs, sort_keys=True))]
        return out
    """
)


def test_legacy_optimizers_match_tensorflow():
    source = "import json\nCONFIGS_JSON = " + repr(json.dumps(CONFIGS)) + "\n" + PROGRAM
    ours = tf_oracle.run_simdist(source, devices=2)
    theirs, failures = tf_oracle.run_tf({"legacy": (source, ours, 2)})
    assert not failures, failures
    tf_oracle.assert_match("legacy", ours, theirs["legacy"], rtol=1e-5, atol=1e-6)
