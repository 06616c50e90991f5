"""Property tests against reference/: metric aggregation over replicas, regularization scaling.

* A confusion metric (Precision, Recall, AUC, TruePositives...) updated by N replicas, each
  with its share of the batch, reads in the cross-replica context the counts of the whole
  batch (reference/metrics.py); the same for Mean.
* A kernel regularizer's loss equals reference/regularizers.py's penalty, and the replicas'
  ``tf.nn.scale_regularization_loss`` shares add up to it once.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from simdist_reference import metrics as ref_metrics
from simdist_reference import regularizers as ref_regularizers
from simdist_reference.losses import mean_metric

import simdist as tf

THRESHOLDS = [0.25, 0.5, 0.75]  # exact in float32: the reference compares in float64


def _strategy(n):
    if n == 1:
        return tf.distribute.get_strategy()
    return tf.distribute.MirroredStrategy([f"/gpu:{i}" for i in range(n)])


@st.composite
def _batches(draw):
    n = draw(st.sampled_from([1, 2, 4]))
    per = draw(st.integers(1, 3))
    size = n * per
    labels = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=size, max_size=size))
    preds = draw(
        st.lists(st.sampled_from([0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]),
                 min_size=size, max_size=size)
    )  # fmt: skip
    weights = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.25]), min_size=size, max_size=size))
    as_f32 = [np.array(v, np.float32) for v in (labels, preds, weights)]
    return (n, *as_f32)


def _update_per_replica(strategy, metric, labels, preds, weights, n):
    per = len(labels) // n

    def step():
        rid = tf.distribute.get_replica_context().replica_id_in_sync_group
        part = slice(rid * per, (rid + 1) * per)
        metric.update_state(labels[part], preds[part], sample_weight=weights[part])

    strategy.run(step)


@settings(max_examples=25, deadline=None)
@given(_batches())
def test_confusion_metrics_aggregate_to_the_whole_batch(batch):
    n, labels, preds, weights = batch
    strategy = _strategy(n)
    with strategy.scope():
        created = {
            "precision": tf.keras.metrics.Precision(thresholds=THRESHOLDS),
            "recall": tf.keras.metrics.Recall(thresholds=THRESHOLDS),
            "tp": tf.keras.metrics.TruePositives(thresholds=THRESHOLDS),
            "fn": tf.keras.metrics.FalseNegatives(thresholds=THRESHOLDS),
            "auc": tf.keras.metrics.AUC(thresholds=THRESHOLDS),
        }
    for metric in created.values():
        _update_per_replica(strategy, metric, labels, preds, weights, n)
    counts = ref_metrics.confusion_counts(labels, preds, THRESHOLDS, weights)
    np.testing.assert_allclose(created["precision"].result().numpy(), ref_metrics.precision(counts),
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(created["recall"].result().numpy(), ref_metrics.recall(counts),
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_array_equal(created["tp"].result().numpy(), counts["tp"])
    np.testing.assert_array_equal(created["fn"].result().numpy(), counts["fn"])
    edges = [-1e-7, *THRESHOLDS, 1 + 1e-7]  # AUC adds the end points
    auc_counts = ref_metrics.confusion_counts(labels, preds, edges, weights)
    assert abs(float(created["auc"].result()) - ref_metrics.roc_auc(auc_counts)) < 1e-6
    per = len(labels) // n
    parts = [slice(r * per, (r + 1) * per) for r in range(n)]
    per_replica = [
        ref_metrics.confusion_counts(labels[p], preds[p], THRESHOLDS, weights[p]) for p in parts
    ]
    assert ref_metrics.aggregate_counts(per_replica) == counts


@settings(max_examples=25, deadline=None)
@given(_batches())
def test_mean_aggregates_to_the_weighted_mean_of_the_batch(batch):
    n, _, values, weights = batch
    strategy = _strategy(n)
    with strategy.scope():
        mean = tf.keras.metrics.Mean()
    per = len(values) // n

    def step():
        rid = tf.distribute.get_replica_context().replica_id_in_sync_group
        mean.update_state(values[rid * per : (rid + 1) * per], weights[rid * per : (rid + 1) * per])

    strategy.run(step)
    want = mean_metric([values], [weights])
    assert abs(float(mean.result()) - float(want)) < 1e-6


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([1, 2, 4]),
    st.floats(0, 0.5),
    st.floats(0, 0.5),
    st.integers(0, 2**16),
)
def test_regularization_losses_count_once_over_replicas(n, l1, l2, seed):
    kernel = np.random.default_rng(seed).normal(size=(3, 2)).astype(np.float32)
    strategy = _strategy(n)
    with strategy.scope():
        layer = tf.keras.layers.Dense(
            2, use_bias=False, kernel_regularizer=tf.keras.regularizers.l1_l2(l1=l1, l2=l2)
        )
        layer.build((None, 3))
        layer.set_weights([kernel])
    factors = layer.kernel_regularizer.get_config()  # float32-rounded, as Keras stores them
    want = ref_regularizers.l1_l2_penalty([kernel], l1=factors["l1"], l2=factors["l2"])
    (penalty,) = layer.losses
    assert abs(float(penalty) - want) <= 1e-5 * max(1.0, want)

    def step():
        return tf.nn.scale_regularization_loss(tf.add_n(layer.losses))

    total = strategy.reduce("SUM", strategy.run(step), axis=None)
    counted_once = ref_regularizers.replicated_penalty_total(want, n)
    assert abs(float(total) - counted_once) <= 1e-5 * max(1.0, want)
