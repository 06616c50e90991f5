"""``tf.keras.metrics``: stateful metrics (``Mean``, ``Sum``, accuracies) and metric functions.

A metric is a Layer whose state lives in variables created with
``synchronization=ON_READ, aggregation=SUM, trainable=False``: under a strategy each replica
accumulates its own copy and reading the value sums them. ``update_state`` accumulates,
``result`` reads (float32 by default), ``reset_state`` zeroes; calling the metric updates
and returns the result. Metric variables are not weights of the model that holds the
metric.

>>> import simdist as tf
>>> m = tf.keras.metrics.Mean()
>>> m.update_state([1.25, 2.25])
>>> float(m.result())
1.75
"""

from __future__ import annotations

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, comparison_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor
from simdist.keras import backend
from simdist.keras.confusion_metrics import (
    AUC,
    FalseNegatives,
    FalsePositives,
    Precision,
    Recall,
    TrueNegatives,
    TruePositives,
)
from simdist.keras.losses import (
    binary_crossentropy,
    categorical_crossentropy,
    hinge,
    kl_divergence,
    log_cosh,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)
from simdist.keras.metric_base import Mean, MeanMetricWrapper, Metric, Reduce, Sum
from simdist.keras.metric_wrappers import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    CosineSimilarity,
    KLDivergence,
    MeanAbsoluteError,
    MeanSquaredError,
    RootMeanSquaredError,
    SparseCategoricalCrossentropy,
    SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
    cosine_similarity,
    sparse_top_k_categorical_accuracy,
    top_k_categorical_accuracy,
)
from simdist.keras.object_registration import with_custom_objects
from simdist.keras.score_metrics import F1Score, FBetaScore, MeanIoU, R2Score
from simdist.keras.serialization import object_config

__all__ = [
    "Metric",
    "Reduce",
    "Sum",
    "Mean",
    "MeanMetricWrapper",
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "SparseCategoricalAccuracy",
    "MeanSquaredError",
    "accuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "sparse_categorical_accuracy",
    "top_k_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
    "cosine_similarity",
    "TopKCategoricalAccuracy",
    "SparseTopKCategoricalAccuracy",
    "MeanAbsoluteError",
    "RootMeanSquaredError",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "KLDivergence",
    "CosineSimilarity",
    "AUC",
    "Precision",
    "Recall",
    "TruePositives",
    "FalsePositives",
    "TrueNegatives",
    "FalseNegatives",
    "F1Score",
    "FBetaScore",
    "R2Score",
    "MeanIoU",
    "accuracy_for",
    "get",
    "serialize",
    "deserialize",
]


# --- metric functions (one value per example) -------------------------------------------
def _as_float(x: Tensor) -> Tensor:
    return math_ops.cast(x, backend.floatx())


def accuracy(y_true, y_pred) -> Tensor:
    """1.0 where ``y_pred`` equals ``y_true``, else 0.0."""
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.dtype != y_pred.dtype:
        y_pred = math_ops.cast(y_pred, y_true.dtype)
    return _as_float(comparison_ops.equal(y_true, y_pred))


def binary_accuracy(y_true, y_pred, threshold: float = 0.5) -> Tensor:
    """Mean over the last axis of ``(y_pred > threshold) == y_true``."""
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    predicted = math_ops.cast(comparison_ops.greater(y_pred, threshold), y_pred.dtype)
    return reduction_ops.reduce_mean(_as_float(comparison_ops.equal(y_true, predicted)), -1)


def categorical_accuracy(y_true, y_pred) -> Tensor:
    """1.0 where the arg-max class of ``y_pred`` is the one-hot ``y_true``'s."""
    return _as_float(
        comparison_ops.equal(reduction_ops.argmax(y_true, -1), reduction_ops.argmax(y_pred, -1))
    )


def sparse_categorical_accuracy(y_true, y_pred) -> Tensor:
    """1.0 where the arg-max class of ``y_pred`` equals the integer label ``y_true``."""
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.shape.rank == y_pred.shape.rank and y_true.shape.rank > 1:
        y_true = array_ops.squeeze(y_true, [-1])
    predicted = reduction_ops.argmax(y_pred, -1)
    if predicted.dtype != y_true.dtype:
        predicted = math_ops.cast(predicted, y_true.dtype)
    return _as_float(comparison_ops.equal(y_true, predicted))


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels."""

    def __init__(self, name="accuracy", dtype=None) -> None:
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often thresholded predictions equal binary labels."""

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5) -> None:
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class matches one-hot labels."""

    def __init__(self, name="categorical_accuracy", dtype=None) -> None:
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the predicted class matches integer labels."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None) -> None:
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        # Labels have no class axis: no rank matching between labels and predictions.
        y_true = math_ops.cast(convert_to_tensor(y_true), self.dtype)
        y_pred = math_ops.cast(convert_to_tensor(y_pred), self.dtype)
        matches = sparse_categorical_accuracy(y_true, y_pred)
        Mean.update_state(self, matches, sample_weight=sample_weight)


# --- names ----------------------------------------------------------------------------------
def accuracy_for(y_true, y_pred):
    """The accuracy function Keras 2's ``compile(metrics=['accuracy'])`` picks, from shapes:
    binary where predictions have one unit in their last axis; sparse categorical where
    labels have a lower rank, or a last axis of 1 against more than one prediction;
    categorical otherwise."""
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    true_shape, pred_shape = list(y_true.shape), list(y_pred.shape)
    true_last = true_shape[-1] if true_shape else None
    pred_last = pred_shape[-1] if pred_shape else None
    if pred_last == 1:
        return binary_accuracy
    if len(true_shape) < len(pred_shape) or (true_last == 1 and (pred_last or 0) > 1):
        return sparse_categorical_accuracy
    return categorical_accuracy


acc = ACC = accuracy
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh

_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        accuracy,
        binary_accuracy,
        categorical_accuracy,
        sparse_categorical_accuracy,
        top_k_categorical_accuracy,
        sparse_top_k_categorical_accuracy,
        mean_squared_error,
        mean_absolute_error,
        mean_absolute_percentage_error,
        mean_squared_logarithmic_error,
        binary_crossentropy,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
        kl_divergence,
        poisson,
        hinge,
        squared_hinge,
        log_cosh,
        cosine_similarity,
    )
}
_FUNCTIONS.update(
    {
        "acc": accuracy, "ACC": accuracy, "mse": mse, "MSE": mse, "mae": mae, "MAE": mae,
        "mape": mape, "MAPE": mape, "msle": msle, "MSLE": msle, "kld": kld, "KLD": kld,
        "kullback_leibler_divergence": kl_divergence, "logcosh": log_cosh,
    }
)  # fmt: skip
_CLASSES = {
    cls.__name__: cls
    for cls in (
        Mean,
        Sum,
        Accuracy,
        BinaryAccuracy,
        CategoricalAccuracy,
        SparseCategoricalAccuracy,
        TopKCategoricalAccuracy,
        SparseTopKCategoricalAccuracy,
        MeanSquaredError,
        MeanAbsoluteError,
        RootMeanSquaredError,
        BinaryCrossentropy,
        CategoricalCrossentropy,
        SparseCategoricalCrossentropy,
        KLDivergence,
        CosineSimilarity,
        AUC,
        Precision,
        Recall,
        TruePositives,
        FalsePositives,
        TrueNegatives,
        FalseNegatives,
        F1Score,
        FBetaScore,
        R2Score,
        MeanIoU,
    )
}


def serialize(metric) -> dict | str:
    """A metric object as Keras 2's ``{'module', 'class_name', 'config', ...}`` dict; a metric
    function as its name."""
    if isinstance(metric, Metric):
        return object_config(metric, "keras.metrics")
    name = getattr(metric, "__name__", None)
    if callable(metric) and name:
        return name
    raise ValueError(f"Cannot serialize {metric!r}: it is not a metric or a named function.")


def deserialize(config, custom_objects=None):
    """A metric function from its name, or a metric object from a class name or a dict.

    Raises:
        ValueError: a name that is no metric (pass custom metrics in ``custom_objects``).
    """
    custom = with_custom_objects(custom_objects)
    if isinstance(config, str):
        name, cls_config = config, None
    else:
        name, cls_config = str(config.get("class_name", "")), config.get("config") or {}
    found = custom.get(name)
    if found is None and cls_config is None:
        found = _FUNCTIONS.get(name)
    if found is None:
        found = _CLASSES.get(name)
    if found is None:
        raise ValueError(
            f"Could not interpret metric identifier {name!r}: Unknown metric function: "
            f"{name!r}. Use a metric class ({sorted(_CLASSES)}), a metric function name "
            f"({sorted(_FUNCTIONS)}), or pass custom metrics in `custom_objects`."
        )
    if isinstance(found, type):
        return found.from_config(cls_config) if cls_config else found()
    return found


def get(identifier, custom_objects=None):
    """A metric from a name (``'AUC'``: an instance; ``'mse'``: the function), a config dict,
    a metric object or a callable.

    Raises:
        ValueError: the identifier names no metric, or is of another kind.
    """
    if isinstance(identifier, Metric) or (
        callable(identifier) and not isinstance(identifier, type)
    ):
        return identifier
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier, custom_objects)
    raise ValueError(
        f"Could not interpret metric identifier: {identifier!r}; pass a metric object, a "
        "metric name or a config dict."
    )
