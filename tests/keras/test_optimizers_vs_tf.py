"""Every optimizer, with and without schedules and clipping, against TensorFlow 2.21 + tf_keras.

One program (``optimizers_program``) runs on simdist and on TensorFlow: fixed weights, fixed
per-replica gradients, three ``apply_gradients`` steps, under the default strategy and under
MirroredStrategy with 2 and 4 replicas (TensorFlow on logical CPUs). The weights after every
step and ``iterations`` are compared.
"""

from __future__ import annotations

import numpy as np
import pytest
import tf_oracle

pytestmark = pytest.mark.tensorflow  # runs real TensorFlow: only with --tensorflow

STEPS = 3
REPLICAS = (1, 2, 4)


def _opt(name, **config):
    return {"class_name": name, "config": config}


def _exp(**config):
    return {"class_name": "ExponentialDecay", "config": config}


CASES = {
    "sgd": _opt("SGD", learning_rate=0.1),
    "sgd_momentum": _opt("SGD", learning_rate=0.05, momentum=0.9),
    "sgd_nesterov": _opt("SGD", learning_rate=0.05, momentum=0.8, nesterov=True),
    "adam": _opt("Adam", learning_rate=0.01),
    "adam_amsgrad": _opt("Adam", learning_rate=0.01, amsgrad=True),
    "rmsprop": _opt("RMSprop", learning_rate=0.01),
    "rmsprop_momentum_centered": _opt(
        "RMSprop", learning_rate=0.01, rho=0.8, momentum=0.5, centered=True
    ),
    "adagrad": _opt("Adagrad", learning_rate=0.1, initial_accumulator_value=0.2),
    "adamax": _opt("Adamax", learning_rate=0.02),
    "nadam": _opt("Nadam", learning_rate=0.02),
    "adadelta": _opt("Adadelta", learning_rate=1.0, rho=0.9),
    "ftrl": _opt("Ftrl", learning_rate=0.1),
    "ftrl_regularized": _opt(
        "Ftrl",
        learning_rate=0.2,
        learning_rate_power=-0.3,
        initial_accumulator_value=0.2,
        l1_regularization_strength=0.01,
        l2_regularization_strength=0.02,
        l2_shrinkage_regularization_strength=0.03,
        beta=0.1,
    ),
    "adamw": _opt("AdamW", learning_rate=0.01, weight_decay=0.1),
    "sgd_weight_decay": _opt("SGD", learning_rate=0.1, weight_decay=0.05),
    "adam_clipnorm": _opt("Adam", learning_rate=0.01, clipnorm=0.5),
    "sgd_clipnorm_and_clipvalue": _opt("SGD", learning_rate=0.1, clipnorm=0.5, clipvalue=0.01),
    "rmsprop_global_clipnorm": _opt("RMSprop", learning_rate=0.01, global_clipnorm=0.7),
    "adagrad_clipvalue": _opt("Adagrad", learning_rate=0.1, clipvalue=0.3),
    "sgd_exponential": _opt(
        "SGD",
        learning_rate=_exp(initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5),
        momentum=0.5,
    ),
    "adam_exponential_staircase": _opt(
        "Adam",
        learning_rate=_exp(
            initial_learning_rate=0.1, decay_steps=2, decay_rate=0.5, staircase=True
        ),
    ),
    "sgd_piecewise": _opt(
        "SGD",
        learning_rate={
            "class_name": "PiecewiseConstantDecay",
            "config": {"boundaries": [0, 1], "values": [0.3, 0.2, 0.1]},
        },
    ),
    "nadam_cosine_warmup": _opt(
        "Nadam",
        learning_rate={
            "class_name": "CosineDecay",
            "config": {
                "initial_learning_rate": 0.01,
                "decay_steps": 4,
                "alpha": 0.1,
                "warmup_target": 0.05,
                "warmup_steps": 2,
            },
        },
    ),
    "adamax_cosine": _opt(
        "Adamax",
        learning_rate={
            "class_name": "CosineDecay",
            "config": {"initial_learning_rate": 0.05, "decay_steps": 2, "alpha": 0.2},
        },
    ),
    "rmsprop_polynomial_cycle": _opt(
        "RMSprop",
        learning_rate={
            "class_name": "PolynomialDecay",
            "config": {
                "initial_learning_rate": 0.05,
                "decay_steps": 2,
                "end_learning_rate": 0.01,
                "power": 2.0,
                "cycle": True,
            },
        },
    ),
    "adagrad_polynomial": _opt(
        "Adagrad",
        learning_rate={
            "class_name": "PolynomialDecay",
            "config": {"initial_learning_rate": 0.2, "decay_steps": 2, "power": 0.5},
        },
    ),
    "adamw_inverse_time": _opt(
        "AdamW",
        learning_rate={
            "class_name": "InverseTimeDecay",
            "config": {"initial_learning_rate": 0.05, "decay_steps": 1, "decay_rate": 0.5},
        },
        weight_decay=0.2,
        global_clipnorm=1.0,
    ),
}


# applied with skip_gradients_aggregation=True: each copy takes its own replica's gradient
SKIP_AGGREGATION = ("sgd_clipnorm", "adam_global_clipnorm")
CASES["sgd_clipnorm"] = _opt("SGD", learning_rate=0.1, clipnorm=0.5)
CASES["adam_global_clipnorm"] = _opt("Adam", learning_rate=0.01, global_clipnorm=0.8)


def _payload() -> dict:
    rng = np.random.default_rng(15)
    return {
        "cases": CASES,
        "skip_aggregation": list(SKIP_AGGREGATION),
        "replicas": list(REPLICAS),
        "steps": STEPS,
        "w0": rng.normal(size=(3, 4)).astype(np.float32).tolist(),
        "b0": rng.normal(size=(4,)).astype(np.float32).tolist(),
        # per step, per replica
        "gw": rng.normal(size=(STEPS, 4, 3, 4)).astype(np.float32).tolist(),
        "gb": rng.normal(size=(STEPS, 4, 4)).astype(np.float32).tolist(),
    }


def optimizers_program(tf, make_strategy, payload):
    out = {}
    for n in payload["replicas"]:
        for case, config in payload["cases"].items():
            strategy = make_strategy(n)
            with strategy.scope():
                w = tf.Variable(np.array(payload["w0"], np.float32), name="w")
                b = tf.Variable(np.array(payload["b0"], np.float32), name="b")
                opt = getattr(tf.keras.optimizers, config["class_name"]).from_config(
                    config["config"]
                )
            for step in range(payload["steps"]):
                gw = np.array(payload["gw"][step], np.float32)[:n]
                gb = np.array(payload["gb"][step], np.float32)[:n]
                if n == 1:
                    opt.apply_gradients([(tf.constant(gw[0]), w), (tf.constant(gb[0]), b)])
                else:
                    grads = strategy.experimental_distribute_values_from_function(
                        lambda ctx, gw=gw, gb=gb: (
                            tf.constant(gw[ctx.replica_id_in_sync_group]),
                            tf.constant(gb[ctx.replica_id_in_sync_group]),
                        )
                    )

                    skip = case in payload["skip_aggregation"]

                    def apply(g, opt=opt, w=w, b=b, skip=skip):
                        pairs = zip(g, [w, b], strict=True)
                        opt.apply_gradients(pairs, skip_gradients_aggregation=skip)

                    strategy.run(apply, args=(grads,))
                    if skip:  # the copies differ: compare every one
                        for r, (wc, bc) in enumerate(zip(w.values, b.values, strict=True)):
                            out[f"{case}/{n}/{step}/w/copy{r}"] = wc.numpy()
                            out[f"{case}/{n}/{step}/b/copy{r}"] = bc.numpy()
                out[f"{case}/{n}/{step}/w"] = w.numpy()
                out[f"{case}/{n}/{step}/b"] = b.numpy()
            out[f"{case}/{n}/iterations"] = np.asarray(opt.iterations.numpy())
    return out


@pytest.mark.slow
def test_every_optimizer_matches_tensorflow():
    payload = _payload()
    theirs = tf_oracle.run_tensorflow(__file__, "optimizers_program", payload)
    ours = tf_oracle.run_simdist(optimizers_program, payload)
    tf_oracle.assert_same(ours, theirs, rtol=2e-5, atol=2e-6)
