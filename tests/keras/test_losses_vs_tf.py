"""Every loss, class and function form, every reduction, against TensorFlow 2.21 + tf_keras.

One program runs on simdist and on TensorFlow: each loss class with each reduction, with
and without sample weights (scalar, per example); each function form; the same losses in
the replica functions of MirroredStrategy with 2 and 4 replicas (NONE and SUM, and whether
AUTO / SUM_OVER_BATCH_SIZE raise there); and Keras 2's label shape rule in ``evaluate``
(``'mse'`` with labels ``(8,)`` against predictions ``(8, 3)``).
"""

from __future__ import annotations

import numpy as np
import pytest
import tf_oracle

pytestmark = pytest.mark.tensorflow  # runs real TensorFlow: only with --tensorflow

REDUCTIONS = ("none", "sum", "sum_over_batch_size", "auto")

# loss class, its keyword arguments, the kind of inputs it takes
CASES = {
    "mse": ("MeanSquaredError", {}, "real"),
    "mae": ("MeanAbsoluteError", {}, "real"),
    "mape": ("MeanAbsolutePercentageError", {}, "real"),
    "msle": ("MeanSquaredLogarithmicError", {}, "real"),
    "huber": ("Huber", {}, "real"),
    "huber_delta": ("Huber", {"delta": 0.3}, "real"),
    "log_cosh": ("LogCosh", {}, "real"),
    "poisson": ("Poisson", {}, "positive"),
    "cosine": ("CosineSimilarity", {}, "real"),
    "cosine_axis0": ("CosineSimilarity", {"axis": 0}, "real"),
    "kld": ("KLDivergence", {}, "probabilities"),
    "bce": ("BinaryCrossentropy", {}, "binary"),
    "bce_logits_smoothing": (
        "BinaryCrossentropy",
        {"from_logits": True, "label_smoothing": 0.2},
        "binary_logits",
    ),
    "cce": ("CategoricalCrossentropy", {}, "probabilities"),
    "cce_logits_smoothing": (
        "CategoricalCrossentropy",
        {"from_logits": True, "label_smoothing": 0.1},
        "logits",
    ),
    "scce": ("SparseCategoricalCrossentropy", {}, "sparse"),
    "scce_logits": ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse_logits"),
    "hinge": ("Hinge", {}, "binary_logits"),
    "squared_hinge": ("SquaredHinge", {}, "binary_logits"),
}
FUNCTIONS = (
    "mean_squared_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "huber",
    "log_cosh",
    "poisson",
    "cosine_similarity",
    "kl_divergence",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "hinge",
    "squared_hinge",
)
FUNCTION_KIND = {
    "poisson": "positive",
    "kl_divergence": "probabilities",
    "binary_crossentropy": "binary",
    "categorical_crossentropy": "probabilities",
    "sparse_categorical_crossentropy": "sparse",
    "hinge": "binary_logits",
    "squared_hinge": "binary_logits",
}


def _inputs() -> dict:
    rng = np.random.default_rng(16)
    n, c = 8, 3

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    logits = rng.normal(size=(n, c)).astype(np.float32)
    labels = rng.integers(0, c, size=(n,))
    one_hot = np.eye(c, dtype=np.float32)[labels]
    return {
        "real": (rng.normal(size=(n, c)), rng.normal(size=(n, c))),
        "positive": (rng.uniform(0, 3, size=(n, c)), rng.uniform(0.1, 3, size=(n, c))),
        "probabilities": (softmax(rng.normal(size=(n, c))), softmax(logits)),
        "binary": (rng.integers(0, 2, size=(n, c)), rng.uniform(0.05, 0.95, size=(n, c))),
        "binary_logits": (rng.integers(0, 2, size=(n, c)), rng.normal(size=(n, c))),
        "logits": (one_hot, logits),
        "sparse": (labels, softmax(logits)),
        "sparse_logits": (labels, logits),
    }


def _payload() -> dict:
    inputs = {
        k: [np.asarray(t, np.float32).tolist(), np.asarray(p, np.float32).tolist()]
        for k, (t, p) in _inputs().items()
    }
    inputs["sparse"][0] = [int(x) for x in inputs["sparse"][0]]
    inputs["sparse_logits"][0] = [int(x) for x in inputs["sparse_logits"][0]]
    rng = np.random.default_rng(17)
    return {
        "cases": CASES,
        "functions": FUNCTIONS,
        "function_kind": FUNCTION_KIND,
        "inputs": inputs,
        "weights": rng.uniform(0, 2, size=(8,)).astype(np.float32).tolist(),
        "x": rng.normal(size=(8, 4)).astype(np.float32).tolist(),
        "kernel": rng.normal(size=(4, 3)).astype(np.float32).tolist(),
        "y_rank1": rng.normal(size=(8,)).astype(np.float32).tolist(),
        "replicas": [2, 4],
    }


def losses_program(tf, make_strategy, payload):
    out = {}
    inputs = payload["inputs"]

    def tensors(kind, lo=0, hi=None):
        y_true, y_pred = inputs[kind]
        dtype = "int64" if kind.startswith("sparse") else "float32"
        return (
            tf.constant(np.array(y_true)[lo:hi], dtype=dtype),
            tf.constant(np.array(y_pred, np.float32)[lo:hi]),
        )

    weights = np.array(payload["weights"], np.float32)
    for case, (cls_name, kwargs, kind) in payload["cases"].items():
        y_true, y_pred = tensors(kind)
        for reduction in ("none", "sum", "sum_over_batch_size", "auto"):
            loss = getattr(tf.keras.losses, cls_name)(reduction=reduction, **kwargs)
            out[f"{case}/{reduction}"] = loss(y_true, y_pred).numpy()
            out[f"{case}/{reduction}/w2"] = loss(y_true, y_pred, sample_weight=2.5).numpy()
            if kwargs.get("axis") == 0:
                continue  # one loss per class: per-example weights do not apply
            out[f"{case}/{reduction}/w"] = loss(y_true, y_pred, sample_weight=weights).numpy()
        for n in payload["replicas"] if kwargs.get("axis") != 0 else ():
            strategy = make_strategy(n)
            per = 8 // n
            for reduction in ("none", "sum"):
                loss = getattr(tf.keras.losses, cls_name)(reduction=reduction, **kwargs)

                def replica_fn(loss=loss, kind=kind, per=per):
                    rid = tf.distribute.get_replica_context().replica_id_in_sync_group
                    t, p = tensors(kind, rid * per, (rid + 1) * per)
                    w = weights[rid * per : (rid + 1) * per]
                    return tf.reduce_sum(loss(t, p, sample_weight=w))

                value = strategy.reduce("SUM", strategy.run(replica_fn), axis=None)
                out[f"{case}/{reduction}/mirrored{n}"] = value.numpy()
            for reduction in ("auto", "sum_over_batch_size"):
                loss = getattr(tf.keras.losses, cls_name)(reduction=reduction, **kwargs)

                def raising_fn(loss=loss, kind=kind):
                    t, p = tensors(kind, 0, 2)
                    try:
                        loss(t, p)
                    except ValueError:
                        return tf.constant(1.0)
                    return tf.constant(0.0)

                raised = strategy.reduce("SUM", strategy.run(raising_fn), axis=None)
                out[f"{case}/{reduction}/mirrored{n}/raises"] = raised.numpy()
    for name in payload["functions"]:
        y_true, y_pred = tensors(payload["function_kind"].get(name, "real"))
        out[f"fn/{name}"] = getattr(tf.keras.losses, name)(y_true, y_pred).numpy()
    # Keras 2's label shape rule inside compile/evaluate: labels (8,), predictions (8, 3)
    for n in (1, *payload["replicas"]):
        strategy = make_strategy(n)
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(3, use_bias=False)])
            model.build((None, 4))
            model.set_weights([np.array(payload["kernel"], np.float32)])
            model.compile(optimizer="sgd", loss="mse")
        x = np.array(payload["x"], np.float32)
        y = np.array(payload["y_rank1"], np.float32)
        out[f"evaluate_mse_rank1_labels/{n}"] = np.asarray(
            model.evaluate(x, y, batch_size=8, verbose=0)
        )
    return out


@pytest.mark.slow
def test_every_loss_matches_tensorflow():
    payload = _payload()
    theirs = tf_oracle.run_tensorflow(__file__, "losses_program", payload)
    ours = tf_oracle.run_simdist(losses_program, payload)
    tf_oracle.assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
