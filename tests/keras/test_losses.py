"""Losses: each class and function against NumPy, every reduction, weights, the strategy rule."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import keras
from simdist.core.context import state
from simdist.keras import losses
from simdist.keras.losses_utils import compute_weighted_loss

EPS = 1e-7
Reduction = keras.losses.Reduction


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def ref_sparse(labels, pred, from_logits):
    logits = pred if from_logits else np.log(np.clip(pred, EPS, 1 - EPS))
    return -np.take_along_axis(_log_softmax(logits), labels[..., None], -1)[..., 0]


def ref_categorical(onehot, pred, from_logits):
    if from_logits:
        return -(onehot * _log_softmax(pred)).sum(-1)
    p = np.clip(pred / pred.sum(-1, keepdims=True), EPS, 1 - EPS)
    return -(onehot * np.log(p)).sum(-1)


def ref_binary(y, pred, from_logits):
    if from_logits:
        per = np.maximum(pred, 0) - pred * y + np.log1p(np.exp(-np.abs(pred)))
    else:
        p = np.clip(pred, EPS, 1 - EPS)
        per = -(y * np.log(p + EPS) + (1 - y) * np.log(1 - p + EPS))
    return per.mean(-1)


def ref_mse(y, pred):
    return ((y - pred) ** 2).mean(-1)


def ref_reduce(per_example, weights, reduction):
    weighted = per_example * (1.0 if weights is None else weights)
    if reduction == Reduction.NONE:
        return weighted
    if reduction == Reduction.SUM:
        return weighted.sum()
    return weighted.sum() / weighted.size


rng = np.random.default_rng(0)
LOGITS = rng.standard_normal((4, 5)).astype(np.float32)
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
LABELS = np.array([0, 3, 4, 1])
ONEHOT = np.eye(5, dtype=np.float32)[LABELS]
BIN_Y = (rng.random((4, 3)) > 0.5).astype(np.float32)
BIN_LOGITS = rng.standard_normal((4, 3)).astype(np.float32)
BIN_P = 1 / (1 + np.exp(-BIN_LOGITS))
WEIGHTS = np.array([1.0, 0.5, 0.0, 2.0], np.float32)

CASES = [
    (
        losses.SparseCategoricalCrossentropy,
        True,
        LABELS,
        LOGITS,
        lambda: ref_sparse(LABELS, LOGITS, True),
    ),
    (
        losses.SparseCategoricalCrossentropy,
        False,
        LABELS,
        PROBS,
        lambda: ref_sparse(LABELS, PROBS, False),
    ),
    (
        losses.CategoricalCrossentropy,
        True,
        ONEHOT,
        LOGITS,
        lambda: ref_categorical(ONEHOT, LOGITS, True),
    ),
    (
        losses.CategoricalCrossentropy,
        False,
        ONEHOT,
        PROBS,
        lambda: ref_categorical(ONEHOT, PROBS, False),
    ),
    (
        losses.BinaryCrossentropy,
        True,
        BIN_Y,
        BIN_LOGITS,
        lambda: ref_binary(BIN_Y, BIN_LOGITS, True),
    ),
    (losses.BinaryCrossentropy, False, BIN_Y, BIN_P, lambda: ref_binary(BIN_Y, BIN_P, False)),
    (losses.MeanSquaredError, None, BIN_Y, BIN_P, lambda: ref_mse(BIN_Y, BIN_P)),
]


@pytest.mark.parametrize(
    "reduction", [Reduction.NONE, Reduction.SUM, Reduction.SUM_OVER_BATCH_SIZE, Reduction.AUTO]
)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("cls,from_logits,y_true,y_pred,per_example", CASES)
def test_loss_classes_match_numpy(
    cls, from_logits, y_true, y_pred, per_example, reduction, weighted
):
    kwargs = {} if from_logits is None else {"from_logits": from_logits}
    loss = cls(reduction=reduction, **kwargs)
    weights = WEIGHTS if weighted else None
    got = loss(y_true, y_pred, sample_weight=weights).numpy()
    want = ref_reduce(per_example(), weights, reduction)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32


def test_function_forms_give_per_example_losses():
    np.testing.assert_allclose(
        losses.sparse_categorical_crossentropy(LABELS, LOGITS, from_logits=True).numpy(),
        ref_sparse(LABELS, LOGITS, True),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        keras.losses.categorical_crossentropy(ONEHOT, PROBS).numpy(),
        ref_categorical(ONEHOT, PROBS, False),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        keras.losses.binary_crossentropy(BIN_Y, BIN_P).numpy(),
        ref_binary(BIN_Y, BIN_P, False),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        keras.losses.mean_squared_error(BIN_Y, BIN_P).numpy(), ref_mse(BIN_Y, BIN_P), rtol=1e-5
    )


def test_sparse_labels_with_trailing_axis_as_in_the_mwms_seed():
    labels = np.array([[1], [0]])
    logits = np.array([[0.2, 0.9], [1.5, -0.3]], np.float32)
    out = keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True)
    assert out.shape == (2,)
    np.testing.assert_allclose(out.numpy(), ref_sparse(labels[:, 0], logits, True), rtol=1e-6)
    with pytest.raises(ValueError, match="labels.shape"):
        keras.losses.sparse_categorical_crossentropy(np.zeros((3,), int), logits)


def test_sparse_over_spatial_axes_reduces_the_class_axis_only():
    logits = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    labels = rng.integers(0, 5, (2, 3, 4))
    out = losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")(labels, logits)
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out.numpy(), ref_sparse(labels, logits, True), rtol=1e-5)


def test_pointwise_losses_need_a_dummy_axis_as_the_tutorial_warns():
    y = rng.random((2, 3, 4, 1)).astype(np.float32)
    p = rng.random((2, 3, 4, 1)).astype(np.float32)
    assert losses.MeanSquaredError(reduction="none")(y, p).shape == (2, 3, 4)
    assert losses.MeanSquaredError(reduction="none")(y[..., 0], p[..., 0]).shape == (2, 3)


def test_mse_class_squeezes_a_trailing_unit_axis_of_predictions():
    y = np.array([1.0, 2.0, 3.0], np.float32)
    p = np.array([[1.5], [2.0], [2.0]], np.float32)
    got = losses.MeanSquaredError()(y, p).numpy()
    np.testing.assert_allclose(got, np.mean((y - p[:, 0]) ** 2), rtol=1e-6)


def test_label_smoothing():
    smoothed = ONEHOT * 0.9 + 0.1 / 5
    got = losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1, reduction="none")(
        ONEHOT, LOGITS
    )
    np.testing.assert_allclose(got.numpy(), ref_categorical(smoothed, LOGITS, True), rtol=1e-5)


def test_sample_weight_shapes_are_matched():
    per = np.arange(6, dtype=np.float32).reshape(2, 3)
    column = np.array([[2.0], [0.5]], np.float32)
    got = compute_weighted_loss(per, column, reduction=Reduction.NONE).numpy()
    np.testing.assert_allclose(got, per * column)
    got = compute_weighted_loss(per, np.array([2.0, 0.5]), reduction=Reduction.SUM).numpy()
    np.testing.assert_allclose(got, (per * column).sum())


def test_invalid_reduction():
    with pytest.raises(ValueError, match="Invalid Reduction Key: mean"):
        losses.MeanSquaredError(reduction="mean")


class FakeStrategy:
    num_replicas_in_sync = 2


@pytest.mark.parametrize("reduction", [Reduction.AUTO, Reduction.SUM_OVER_BATCH_SIZE])
def test_auto_and_sum_over_batch_size_refused_under_a_strategy(reduction):
    loss = losses.SparseCategoricalCrossentropy(from_logits=True, reduction=reduction)
    state.strategy_stack.append(FakeStrategy())
    try:
        with pytest.raises(ValueError, match="Reduction.SUM` or `tf.keras.losses.Reduction.NONE"):
            loss(LABELS, LOGITS)
        ok = losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
        assert ok(LABELS, LOGITS).shape == (4,)
        assert losses.SparseCategoricalCrossentropy(reduction="sum")(LABELS, PROBS).shape == ()
        assert keras.losses.sparse_categorical_crossentropy(LABELS, PROBS).shape == (4,)
        loss._allow_sum_over_batch_size = True  # what Keras's own compile/fit set
        assert loss(LABELS, LOGITS).shape == ()
    finally:
        state.strategy_stack.pop()
    assert losses.SparseCategoricalCrossentropy(reduction=reduction)(LABELS, PROBS).shape == ()


def test_losses_are_differentiable():
    logits = tf.Variable(LOGITS)
    with tf.GradientTape() as tape:
        loss = losses.SparseCategoricalCrossentropy(from_logits=True)(LABELS, logits)
    grad = tape.gradient(loss, logits).numpy()
    softmax = np.exp(_log_softmax(LOGITS))
    np.testing.assert_allclose(grad, (softmax - ONEHOT) / 4, rtol=1e-5, atol=1e-7)


@given(st.lists(st.floats(0.01, 0.99), min_size=1, max_size=6), st.sampled_from([False, True]))
def test_binary_crossentropy_with_and_without_logits_agree(probs, use_weight):
    p = np.array(probs, np.float32)[None, :]
    y = (np.arange(p.size) % 2).astype(np.float32)[None, :]
    logits = np.log(p / (1 - p))
    weight = np.array([0.5], np.float32) if use_weight else None
    a = losses.BinaryCrossentropy()(y, p, sample_weight=weight).numpy()
    b = losses.BinaryCrossentropy(from_logits=True)(y, logits, sample_weight=weight).numpy()
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_get_by_name():
    assert losses.get("mse") is losses.mean_squared_error
    assert isinstance(
        losses.get("SparseCategoricalCrossentropy"), losses.SparseCategoricalCrossentropy
    )
    with pytest.raises(ValueError, match="Could not interpret loss"):
        losses.get("hinge_of_fate")


def test_auto_reduction_refused_inside_a_replica_function():
    class FakeReplicaContext:
        num_replicas_in_sync = 2

    state.replica_context = FakeReplicaContext()
    try:
        with pytest.raises(ValueError, match="divide|global_batch_size"):
            losses.BinaryCrossentropy(from_logits=True)(BIN_Y, BIN_LOGITS)
    finally:
        state.replica_context = None
