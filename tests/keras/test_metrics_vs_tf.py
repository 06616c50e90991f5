"""Every metric against TensorFlow 2.21 + tf_keras, alone and under MirroredStrategy.

One program runs on simdist and on TensorFlow: each metric sees two batches (the second
with per-example weights) and its result is read after each; then the same metric is created
under MirroredStrategy with 2 and 4 replicas, each replica updates it with its part of the
batch inside ``strategy.run``, and the result read in the cross-replica context (the
replicas' ON_READ counts summed) must equal the single-device one.
"""

from __future__ import annotations

import numpy as np
import pytest
import tf_oracle

pytestmark = pytest.mark.tensorflow  # runs real TensorFlow: only with --tensorflow

CASES = {
    "accuracy": ("Accuracy", {}, "classes"),
    "binary_accuracy": ("BinaryAccuracy", {}, "binary"),
    "binary_accuracy_0.3": ("BinaryAccuracy", {"threshold": 0.3}, "binary"),
    "categorical_accuracy": ("CategoricalAccuracy", {}, "one_hot"),
    "sparse_categorical_accuracy": ("SparseCategoricalAccuracy", {}, "sparse"),
    "top_2": ("TopKCategoricalAccuracy", {"k": 2}, "one_hot"),
    "sparse_top_2": ("SparseTopKCategoricalAccuracy", {"k": 2}, "sparse"),
    "auc": ("AUC", {}, "binary"),
    "auc_pr": ("AUC", {"curve": "PR"}, "binary"),
    "auc_5_minoring": ("AUC", {"num_thresholds": 5, "summation_method": "minoring"}, "binary"),
    "auc_pr_majoring": ("AUC", {"curve": "PR", "summation_method": "majoring"}, "binary"),
    "auc_thresholds": ("AUC", {"thresholds": [0.3, 0.6, 0.65]}, "binary"),
    "auc_logits": ("AUC", {"from_logits": True}, "binary_logits"),
    "auc_label_weights": ("AUC", {"label_weights": [0.2, 1.0, 3.0]}, "binary"),
    "auc_multi_label": ("AUC", {"multi_label": True, "num_labels": 3}, "binary"),
    "auc_multi_label_lazy": ("AUC", {"multi_label": True}, "binary"),
    "auc_multi_label_weights": (
        "AUC",
        {"multi_label": True, "num_labels": 3, "label_weights": [0.2, 1.0, 3.0]},
        "binary",
    ),
    "auc_multi_label_pr": ("AUC", {"multi_label": True, "curve": "PR"}, "binary"),
    "auc_multi_label_pr_weights": (
        "AUC",
        {"multi_label": True, "curve": "PR", "label_weights": [1.0, 0.0, 2.0]},
        "binary",
    ),
    "auc_multi_label_thresholds": (
        "AUC",
        {"multi_label": True, "thresholds": [0.3, 0.6], "summation_method": "minoring"},
        "binary",
    ),
    "auc_multi_label_logits": ("AUC", {"multi_label": True, "from_logits": True}, "binary_logits"),
    "precision": ("Precision", {}, "binary"),
    "precision_thresholds": ("Precision", {"thresholds": [0.2, 0.5, 0.8]}, "binary"),
    "precision_top_2": ("Precision", {"top_k": 2}, "binary"),
    "precision_class_1": ("Precision", {"class_id": 1}, "binary"),
    "recall": ("Recall", {}, "binary"),
    "recall_thresholds": ("Recall", {"thresholds": [0.1, 0.9]}, "binary"),
    "recall_top_1_class_2": ("Recall", {"top_k": 1, "class_id": 2}, "binary"),
    "true_positives": ("TruePositives", {}, "binary"),
    "false_positives": ("FalsePositives", {"thresholds": [0.25, 0.75]}, "binary"),
    "true_negatives": ("TrueNegatives", {}, "binary"),
    "false_negatives": ("FalseNegatives", {}, "binary"),
    "sum": ("Sum", {}, "values"),
    "mean": ("Mean", {}, "values"),
    "mse": ("MeanSquaredError", {}, "real"),
    "mae": ("MeanAbsoluteError", {}, "real"),
    "rmse": ("RootMeanSquaredError", {}, "real"),
    "bce": ("BinaryCrossentropy", {}, "binary"),
    "bce_logits": ("BinaryCrossentropy", {"from_logits": True}, "binary_logits"),
    "cce": ("CategoricalCrossentropy", {"label_smoothing": 0.1}, "one_hot"),
    "scce": ("SparseCategoricalCrossentropy", {}, "sparse"),
    "kld": ("KLDivergence", {}, "one_hot"),
    "cosine": ("CosineSimilarity", {}, "real"),
    "wrapper_huber": ("MeanMetricWrapper", {"delta": 0.5}, "real"),
}
N = 8


def _payload() -> dict:
    rng = np.random.default_rng(18)
    c = 3

    def probs(shape):
        x = rng.normal(size=shape)
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def batch():
        labels = rng.integers(0, c, size=(N,))
        return {
            "classes": [rng.integers(0, 3, size=(N, 1)), rng.integers(0, 3, size=(N, 1))],
            "binary": [rng.integers(0, 2, size=(N, c)), rng.uniform(0, 1, size=(N, c))],
            "binary_logits": [rng.integers(0, 2, size=(N, c)), rng.normal(size=(N, c))],
            "one_hot": [np.eye(c)[labels], probs((N, c))],
            "sparse": [labels, probs((N, c))],
            "real": [rng.normal(size=(N, c)), rng.normal(size=(N, c))],
            "values": [rng.normal(size=(N,)), rng.normal(size=(N,))],
        }

    def as_lists(b):
        return {k: [np.asarray(t).tolist(), np.asarray(p).tolist()] for k, (t, p) in b.items()}

    return {
        "cases": CASES,
        "batches": [as_lists(batch()), as_lists(batch())],
        "weights": rng.uniform(0, 2, size=(N,)).round(2).tolist(),
        "replicas": [2, 4],
    }


def metrics_program(tf, make_strategy, payload):
    out = {}

    def make(cls_name, kwargs):
        if cls_name == "MeanMetricWrapper":
            return tf.keras.metrics.MeanMetricWrapper(tf.keras.losses.huber, **kwargs)
        return getattr(tf.keras.metrics, cls_name)(**kwargs)

    def update(metric, kind, batch, lo, hi, weight):
        y_true, y_pred = (np.array(v) for v in payload["batches"][batch][kind])
        y_pred = tf.constant(y_pred[lo:hi].astype(np.float32))
        label_dtype = np.int64 if kind in ("sparse", "classes") else np.float32
        y_true = tf.constant(y_true[lo:hi].astype(label_dtype))
        w = None if weight is None else tf.constant(np.array(weight[lo:hi], np.float32))
        if kind == "values":
            metric.update_state(y_pred, sample_weight=w)
        else:
            metric.update_state(y_true, y_pred, sample_weight=w)

    weights = payload["weights"]
    for case, (cls_name, kwargs, kind) in payload["cases"].items():
        metric = make(cls_name, kwargs)
        update(metric, kind, 0, 0, N, None)
        out[f"{case}/batch0"] = metric.result().numpy()
        update(metric, kind, 1, 0, N, weights)
        out[f"{case}/batch1"] = metric.result().numpy()
        metric.reset_state()
        update(metric, kind, 1, 0, N, None)
        out[f"{case}/reset"] = metric.result().numpy()
        for n in payload["replicas"]:
            strategy = make_strategy(n)
            with strategy.scope():
                metric = make(cls_name, kwargs)
            per = N // n
            for batch, weight in ((0, None), (1, weights)):

                def replica_fn(metric=metric, kind=kind, per=per, batch=batch, weight=weight):
                    rid = tf.distribute.get_replica_context().replica_id_in_sync_group
                    update(metric, kind, batch, rid * per, (rid + 1) * per, weight)

                strategy.run(replica_fn)
            out[f"{case}/mirrored{n}"] = metric.result().numpy()
    return out


@pytest.mark.slow
def test_every_metric_matches_tensorflow():
    payload = _payload()
    theirs = tf_oracle.run_tensorflow(__file__, "metrics_program", payload)
    ours = tf_oracle.run_simdist(metrics_program, payload)
    tf_oracle.assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
