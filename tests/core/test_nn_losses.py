"""Cross-entropies and loss scaling: formulas, extreme logits, gradients, TF's errors."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
import simdist.nn as nn
from simdist import errors
from simdist.core.context import state
from tests.gradcheck import check_gradients

logit_values = st.floats(-10, 10, allow_nan=False)


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@st.composite
def sparse_case(draw):
    batch = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=3))
    classes = draw(st.integers(1, 5))
    logits = draw(hnp.arrays(np.float64, batch + (classes,), elements=logit_values))
    labels = draw(hnp.arrays(np.int32, batch, elements=st.integers(0, classes - 1)))
    return labels, logits


@settings(max_examples=25)
@given(sparse_case())
def test_sparse_softmax_cross_entropy_formula_and_gradient(case):
    labels, logits = case
    got = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits).numpy()
    expected = -np.take_along_axis(_log_softmax(logits), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    check_gradients(lambda t: nn.sparse_softmax_cross_entropy_with_logits(labels, t), logits)


def test_sparse_labels_get_no_gradient_and_extremes_stay_finite():
    logits = tf.constant([[1e4, 0.0, -1e4]])
    labels = tf.constant([1])
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    grad = tape.gradient(loss, logits).numpy()
    assert loss.dtype == tf.float32
    np.testing.assert_array_equal(loss.numpy(), [1e4])
    np.testing.assert_array_equal(grad, [[1.0, -1.0, 0.0]])


def test_sparse_errors_say_what_tf_says():
    logits = np.zeros((1, 10), np.float32)
    with pytest.raises(
        errors.InvalidArgumentError,
        match=r"Received a label value of 10 which is outside the valid range of \[0, 10\)",
    ):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[10], logits=logits)
    with pytest.raises(errors.InvalidArgumentError, match="label value of -1"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[-1], logits=logits)
    with pytest.raises(ValueError, match=r"`labels.shape.rank` must equal `logits.shape.rank - 1`"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[[1]], logits=logits)
    with pytest.raises(ValueError, match=r"must equal `logits.shape` except for the last"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 2, 3], logits=np.zeros((2, 4)))
    with pytest.raises(errors.InvalidArgumentError, match="'Tlabels' of float32"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1.0], logits=logits)
    with pytest.raises(errors.InvalidArgumentError, match="int32 is not in the list"):
        nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=[[1, 2]])


@st.composite
def dense_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    logits = draw(hnp.arrays(np.float64, shape, elements=logit_values))
    labels = draw(hnp.arrays(np.float64, shape, elements=st.floats(0, 1)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return labels, logits, axis


@settings(max_examples=25)
@given(dense_case())
def test_softmax_cross_entropy_formula_and_gradients(case):
    labels, logits, axis = case
    got = nn.softmax_cross_entropy_with_logits(labels, logits, axis=axis).numpy()
    expected = -(labels * _log_softmax(logits, axis)).sum(axis=axis)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    check_gradients(
        lambda y, x: nn.softmax_cross_entropy_with_logits(y, x, axis=axis), labels, logits
    )


def test_softmax_cross_entropy_extremes_broadcast_and_errors():
    out = nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=[[1e4, 0.0]])
    np.testing.assert_array_equal(out.numpy(), [1e4])
    bcast = nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0]], logits=np.zeros((3, 2)))
    np.testing.assert_allclose(bcast.numpy(), [np.log(2)] * 3)
    casted = nn.softmax_cross_entropy_with_logits(labels=[[0, 1]], logits=[[1.0, 0.0]])
    assert casted.dtype == tf.float32
    np.testing.assert_allclose(casted.numpy(), [1.3132616], rtol=1e-6)
    with pytest.raises(
        errors.InvalidArgumentError,
        match=r"logits and labels must be broadcastable: logits_size=\[1, 2\] labels_size=\[1, 3\]",
    ):
        nn.softmax_cross_entropy_with_logits(labels=[[0.0, 1.0, 0.0]], logits=[[1.0, 0.0]])


@settings(max_examples=25)
@given(
    hnp.array_shapes(min_dims=1, max_dims=3, max_side=4).flatmap(
        lambda s: st.tuples(
            hnp.arrays(np.float64, s, elements=st.floats(0, 1)),
            hnp.arrays(np.float64, s, elements=logit_values),
        )
    )
)
def test_sigmoid_cross_entropy_formula_and_gradients(case):
    labels, logits = case
    sig = 1 / (1 + np.exp(-logits))
    expected = -labels * np.log(sig) - (1 - labels) * np.log(1 - sig)
    got = nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    check_gradients(lambda y, x: nn.sigmoid_cross_entropy_with_logits(y, x), labels, logits)


def test_sigmoid_cross_entropy_extremes_and_errors():
    out = nn.sigmoid_cross_entropy_with_logits(labels=[0.0, 1.0], logits=[1e4, -1e4])
    np.testing.assert_array_equal(out.numpy(), [1e4, 1e4])
    msg = r"`logits` and `labels` must have the same shape, received \(\(2,\) vs \(3,\)\)"
    with pytest.raises(ValueError, match=msg):
        nn.sigmoid_cross_entropy_with_logits(labels=[0.0, 1.0, 0.0], logits=[1.0, 2.0])


# --- compute_average_loss / scale_regularization_loss ------------------------------------
def test_compute_average_loss_examples():
    assert float(nn.compute_average_loss([2.0, 3.0], global_batch_size=4)) == 1.25
    assert float(nn.compute_average_loss([2.0, 3.0])) == 2.5
    assert float(nn.compute_average_loss([2.0, 3.0], [1.0, 2.0], global_batch_size=4)) == 2.0
    assert float(nn.compute_average_loss([2.0, 3.0], 2.0, global_batch_size=4)) == 2.5
    two_d = nn.compute_average_loss([[2.0, 3.0], [1.0, 1.0]], [1.0, 2.0], global_batch_size=4)
    assert float(two_d) == 2.25
    assert float(nn.compute_average_loss([2.0, 3.0], global_batch_size=0)) == 0.0
    f64 = nn.compute_average_loss(tf.constant([2.0, 3.0], dtype="float64"), global_batch_size=4)
    assert f64.dtype == tf.float64
    assert nn.compute_average_loss([2.0, 3.0], global_batch_size=4).dtype == tf.float32


@pytest.mark.parametrize(
    ("gbs", "exc", "pattern"),
    [
        (-1, errors.InvalidArgumentError, "global_batch_size must be non-negative"),
        (2.5, TypeError, "global_batch_size must be an integer"),
        ([2], ValueError, "global_batch_size must be scalar"),
        (True, TypeError, "global_batch_size must be an integer"),
    ],
)
def test_compute_average_loss_rejects_bad_global_batch_sizes(gbs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        nn.compute_average_loss([2.0, 3.0], global_batch_size=gbs)


def test_compute_average_loss_rejects_a_scalar_loss():
    with pytest.raises(ValueError, match="Expected a tensor with at least rank 1"):
        nn.compute_average_loss(2.0, global_batch_size=4)


def test_compute_average_loss_gradients():
    loss = np.array([[0.5, 1.5], [2.0, -1.0], [0.25, 3.0]])
    weights = np.array([1.0, 0.5, 2.0])
    check_gradients(lambda t: nn.compute_average_loss(t, global_batch_size=8), loss)
    check_gradients(
        lambda t, w: nn.compute_average_loss(t, sample_weight=w, global_batch_size=8),
        loss,
        weights,
    )


def test_replica_count_comes_from_the_context():
    replica = SimpleNamespace(num_replicas_in_sync=2)
    state.replica_context = replica
    try:
        assert float(nn.compute_average_loss([2.0, 3.0])) == 1.25  # 5 / (2 per replica * 2)
        assert float(nn.scale_regularization_loss([2.0, 3.0])) == 2.5
    finally:
        state.replica_context = None
    state.strategy_stack.append(replica)
    try:
        with pytest.raises(RuntimeError, match="cross replica context"):
            nn.compute_average_loss([2.0, 3.0])
        with pytest.raises(RuntimeError, match="cross replica context"):
            nn.scale_regularization_loss(1.0)
        assert float(nn.compute_average_loss([2.0, 3.0], global_batch_size=4)) == 1.25
    finally:
        state.strategy_stack.pop()


def test_scale_regularization_loss_outside_a_strategy():
    assert float(nn.scale_regularization_loss([2.0, 3.0])) == 5.0
    check_gradients(nn.scale_regularization_loss, np.array([1.0, -2.0]))
