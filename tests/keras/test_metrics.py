"""Metrics: values against NumPy, weights, reset, variable settings, the tutorial's 1.75."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import keras
from simdist.keras import metrics


def test_mean_of_per_replica_losses_is_the_tutorials_1_75():
    # Two replicas, losses [2, 3] and [4, 5], global batch 4: scaled losses 1.25 and 2.25.
    mean = keras.metrics.Mean(name="train_loss")
    mean.update_state(1.25)
    mean.update_state(2.25)
    assert float(mean.total.numpy()) == 3.5 and float(mean.count.numpy()) == 2.0
    result = mean.result()
    assert result.dtype == tf.float32 and float(result) == 1.75


def test_state_variables_are_on_read_sum_and_not_trainable():
    mean = metrics.Mean()
    assert [v.name for v in mean.variables] == ["total:0", "count:0"]
    for v in mean.variables:
        assert not v.trainable
        assert v.synchronization is tf.VariableSynchronization.ON_READ
        assert v.aggregation is tf.VariableAggregation.SUM
    assert mean.trainable_weights == []


def test_weighted_mean_and_sum():
    values = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    weights = np.array([1.0, 0.0, 2.0, 0.5], np.float32)
    mean = metrics.Mean()
    mean.update_state(values, sample_weight=weights)
    np.testing.assert_allclose(mean.result().numpy(), (values * weights).sum() / weights.sum())
    total = metrics.Sum()
    total.update_state(values, sample_weight=weights)
    total.update_state([10.0])
    np.testing.assert_allclose(total.result().numpy(), (values * weights).sum() + 10)


def test_per_example_weights_on_2d_values_average_each_row():
    values = np.array([[1.0, 3.0], [5.0, 7.0]], np.float32)
    mean = metrics.Mean()
    mean.update_state(values, sample_weight=np.array([1.0, 3.0], np.float32))
    np.testing.assert_allclose(mean.result().numpy(), (2.0 * 1 + 6.0 * 3) / 4)


def test_empty_mean_is_zero_and_reset():
    mean = metrics.Mean()
    assert float(mean.result()) == 0.0
    mean.update_state([4.0, 6.0])
    assert float(mean.result()) == 5.0
    mean.reset_states()
    assert float(mean.result()) == 0.0
    mean.update_state([1.0])
    mean.reset_state()
    assert float(mean.count.numpy()) == 0.0


def test_sparse_categorical_accuracy_and_call():
    labels = np.array([2, 1, 0, 1])
    logits = np.array([[0, 1, 3], [0, 2, 1], [1, 0, 0], [5, 1, 0]], np.float32)
    acc = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    assert acc.name == "train_accuracy"
    assert float(acc(labels, logits)) == 0.75
    acc.update_state(labels[:2, None], logits[:2])  # labels with a trailing axis
    np.testing.assert_allclose(float(acc.result()), 5 / 6)
    acc.update_state(labels, logits, sample_weight=[0, 0, 0, 4])
    np.testing.assert_allclose(float(acc.result()), 5 / 10)


def test_categorical_binary_and_plain_accuracy():
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1]]
    probs = np.array([[0.8, 0.1, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]], np.float32)
    assert np.isclose(float(metrics.CategoricalAccuracy()(onehot, probs)), 2 / 3)
    y = np.array([[1.0], [0.0], [1.0], [0.0]], np.float32)
    p = np.array([[0.7], [0.2], [0.4], [0.6]], np.float32)
    assert float(metrics.BinaryAccuracy()(y, p)) == 0.5
    assert float(metrics.BinaryAccuracy(threshold=0.3)(y, p)) == 0.75
    assert float(metrics.Accuracy()([1, 2, 3, 4], [1, 2, 0, 4])) == 0.75


def test_mean_squared_error_metric():
    y = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    p = np.array([[1.0, 1.0], [1.0, 1.0]], np.float32)
    m = metrics.MeanSquaredError()
    m.update_state(y, p)
    np.testing.assert_allclose(m.result().numpy(), ((y - p) ** 2).mean())


def test_metric_attribute_is_not_a_model_weight():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.tracker = keras.metrics.Mean()

        def call(self, x):
            return self.dense(x)

    net = Net()
    net(np.ones((1, 2), np.float32))
    assert [v.name for v in net.weights] == ["net/dense/kernel:0", "net/dense/bias:0"]


@given(
    st.lists(
        st.lists(st.floats(-100, 100, width=32), min_size=1, max_size=5), min_size=1, max_size=4
    )
)
def test_mean_over_batches_equals_numpy_mean(batches):
    mean = metrics.Mean()
    for batch in batches:
        mean.update_state(np.array(batch, np.float32))
    flat = np.concatenate([np.array(b, np.float64) for b in batches])
    np.testing.assert_allclose(float(mean.result()), flat.mean(), rtol=1e-5, atol=1e-4)


def test_custom_metric_subclass():
    class CountPositives(keras.metrics.Metric):
        def __init__(self, name="count_positives"):
            super().__init__(name=name)
            self.positives = self.add_weight("positives", initializer="zeros")

        def update_state(self, values):
            self.positives.assign_add(float((np.asarray(values) > 0).sum()))

        def result(self):
            return self.positives.value()

    m = CountPositives()
    assert float(m([1.0, -1.0, 2.0])) == 2.0
    m.reset_state()
    assert float(m.result()) == 0.0
    with pytest.raises(NotImplementedError):
        keras.metrics.Metric().result()
