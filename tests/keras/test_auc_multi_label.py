"""AUC(multi_label=True): one curve per label, averaged (TF's results: test_metrics_vs_tf)."""

import numpy as np
import pytest

import simdist as tf

RNG = np.random.default_rng(3)
Y_TRUE = RNG.integers(0, 2, size=(12, 3)).astype(np.float32)
Y_PRED = RNG.uniform(size=(12, 3)).astype(np.float32)


def per_label(curve: str) -> np.ndarray:
    out = []
    for label in range(3):
        metric = tf.keras.metrics.AUC(curve=curve)
        metric.update_state(Y_TRUE[:, label], Y_PRED[:, label])
        out.append(float(metric.result()))
    return np.array(out)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_multi_label_is_the_mean_of_the_labels_curves(curve):
    metric = tf.keras.metrics.AUC(multi_label=True, curve=curve)
    metric.update_state(Y_TRUE, Y_PRED)
    assert metric.true_positives.shape == (200, 3)
    np.testing.assert_allclose(float(metric.result()), per_label(curve).mean(), rtol=1e-6)
    weights = [0.5, 0.0, 2.0]
    weighted = tf.keras.metrics.AUC(multi_label=True, curve=curve, label_weights=weights)
    weighted.update_state(Y_TRUE, Y_PRED)
    expected = np.sum(per_label(curve) * weights) / np.sum(weights)
    np.testing.assert_allclose(float(weighted.result()), expected, rtol=1e-6)


def test_sample_weights_reset_and_config():
    metric = tf.keras.metrics.AUC(multi_label=True, num_labels=3)
    weights = np.linspace(0.1, 2.0, 12).astype(np.float32)
    metric.update_state(Y_TRUE, Y_PRED, sample_weight=weights)
    one = float(metric.result())
    metric.reset_state()
    assert float(metric.result()) == 0.0
    metric.update_state(Y_TRUE, Y_PRED, sample_weight=weights)
    assert float(metric.result()) == one
    config = metric.get_config()
    assert config["multi_label"] is True and config["num_labels"] == 3
    assert tf.keras.metrics.AUC(multi_label=True).result().numpy() == 0.0


def test_under_a_strategy_the_replicas_counts_are_summed():
    strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with strategy.scope():
        metric = tf.keras.metrics.AUC(multi_label=True)  # counts made at the first update

    def update():
        rid = tf.distribute.get_replica_context().replica_id_in_sync_group
        metric.update_state(Y_TRUE[rid * 6 : rid * 6 + 6], Y_PRED[rid * 6 : rid * 6 + 6])

    strategy.run(update)
    alone = tf.keras.metrics.AUC(multi_label=True)
    alone.update_state(Y_TRUE, Y_PRED)
    np.testing.assert_allclose(float(metric.result()), float(alone.result()), rtol=1e-6)


def test_bad_labels_are_refused():
    with pytest.raises(ValueError, match="non-negative"):
        tf.keras.metrics.AUC(label_weights=[1.0, -1.0])
    metric = tf.keras.metrics.AUC(multi_label=True, num_labels=2)
    with pytest.raises(ValueError, match="Number of labels is not consistent"):
        metric.update_state(Y_TRUE, Y_PRED)
    with pytest.raises(ValueError, match="rank 2"):
        tf.keras.metrics.AUC(multi_label=True).update_state(Y_TRUE[:, 0], Y_PRED[:, 0])
    with pytest.raises(ValueError, match="Number of labels is not consistent"):
        tf.keras.metrics.AUC(label_weights=[1.0, 2.0]).update_state(Y_TRUE, Y_PRED)
