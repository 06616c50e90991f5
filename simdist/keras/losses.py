"""``tf.keras.losses``: loss functions (per-example) and loss classes (reduced), Keras 2 style.

A loss *function* (``sparse_categorical_crossentropy(y_true, y_pred)``) returns one value per
example: categorical losses reduce the class axis, pointwise ones (``mean_squared_error``,
``binary_crossentropy``) average over the last axis. A loss *class* wraps a function and then
weights and reduces as ``reduction`` says (see :mod:`simdist.keras.losses_utils`).

Under a ``tf.distribute`` strategy, outside Keras's own training loop, a loss object whose
reduction is ``AUTO`` or ``SUM_OVER_BATCH_SIZE`` raises ``ValueError`` (see
:mod:`simdist.keras.loss_base`). Regression, distribution and margin losses (Huber, KL
divergence, cosine similarity...) are in :mod:`simdist.keras.regression_losses`; all are
named here, and ``get``/``serialize``/``deserialize`` resolve them as Keras 2 does.
"""

from __future__ import annotations

from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, elementwise_ops, math_ops, nn_losses, reduction_ops
from simdist.core.tensor import Tensor
from simdist.keras import backend, regression_losses
from simdist.keras.loss_base import Loss, LossFunctionWrapper
from simdist.keras.losses_utils import Reduction, ReductionV2, prepare_labels
from simdist.keras.object_registration import with_custom_objects
from simdist.keras.regression_losses import (
    cosine_similarity,
    hinge,
    huber,
    kl_divergence,
    log_cosh,
    mean_absolute_percentage_error,
    mean_squared_logarithmic_error,
    poisson,
    squared_hinge,
)

__all__ = [
    "Reduction",
    "Loss",
    "LossFunctionWrapper",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "mean_squared_error",
    "mean_absolute_error",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "get",
]

# --- per-example loss functions ---------------------------------------------------------
_prepare = prepare_labels


def _smooth(y_true: Tensor, label_smoothing: float, num_classes) -> Tensor:
    if not label_smoothing:
        return y_true
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}.")
    scaled = math_ops.multiply(y_true, 1.0 - label_smoothing)
    return math_ops.add(scaled, label_smoothing / num_classes)


def mean_squared_error(y_true, y_pred) -> Tensor:
    """``mean(square(y_true - y_pred), axis=-1)``: one value per example."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return reduction_ops.reduce_mean(
        elementwise_ops.square(math_ops.subtract(y_pred, y_true)), axis=-1
    )


def mean_absolute_error(y_true, y_pred) -> Tensor:
    """``mean(abs(y_true - y_pred), axis=-1)``: one value per example."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return reduction_ops.reduce_mean(elementwise_ops.abs(math_ops.subtract(y_pred, y_true)), -1)


def binary_crossentropy(
    y_true, y_pred, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1
) -> Tensor:
    """Binary cross-entropy averaged over ``axis``.

    Probabilities are clipped to ``[eps, 1 - eps]`` and ``eps`` is added inside the logs
    (``eps = tf.keras.backend.epsilon()``); with ``from_logits=True`` the stable
    ``sigmoid_cross_entropy_with_logits`` is used.
    """
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _smooth(y_true, label_smoothing, 2.0)
    if from_logits:
        per_element = nn_losses.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        eps = backend.epsilon()
        p = math_ops.clip_by_value(y_pred, eps, 1.0 - eps)
        log_p = elementwise_ops.log(math_ops.add(p, eps))
        log_not_p = elementwise_ops.log(math_ops.add(math_ops.subtract(1.0, p), eps))
        positive = math_ops.multiply(y_true, log_p)
        negative = math_ops.multiply(math_ops.subtract(1.0, y_true), log_not_p)
        per_element = elementwise_ops.negative(math_ops.add(positive, negative))
    return reduction_ops.reduce_mean(per_element, axis=axis)


def categorical_crossentropy(
    y_true, y_pred, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1
) -> Tensor:
    """Cross-entropy between one-hot (or soft) labels and predictions, summed over ``axis``.

    Without logits the predictions are first renormalised to sum to 1 along ``axis`` and
    clipped to ``[eps, 1 - eps]``.
    """
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _smooth(y_true, label_smoothing, float(y_pred.shape[axis]))
    if from_logits:
        return nn_losses.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    total = reduction_ops.reduce_sum(y_pred, axis=axis, keepdims=True)
    eps = backend.epsilon()
    p = math_ops.clip_by_value(math_ops.divide(y_pred, total), eps, 1.0 - eps)
    return elementwise_ops.negative(
        reduction_ops.reduce_sum(math_ops.multiply(y_true, elementwise_ops.log(p)), axis=axis)
    )


def sparse_categorical_crossentropy(
    y_true, y_pred, from_logits: bool = False, axis: int = -1
) -> Tensor:
    """Cross-entropy between integer labels and predictions over the class axis.

    ``y_true`` has the shape of ``y_pred`` without its class axis (a trailing axis of size 1
    is also accepted). Without logits, probabilities are clipped to ``[eps, 1 - eps]`` and
    their logs are used as logits.

    Raises:
        ValueError: label and prediction shapes that do not match.
    """
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, backend.floatx())
    y_true = convert_to_tensor(y_true)
    rank = y_pred.shape.rank
    axis = axis % rank
    if axis != rank - 1:
        perm = [d for d in range(rank) if d != axis] + [axis]
        y_pred = array_ops.transpose(y_pred, perm)
    logits = y_pred
    if not from_logits:
        eps = backend.epsilon()
        logits = elementwise_ops.log(math_ops.clip_by_value(y_pred, eps, 1.0 - eps))
    out_shape = list(y_pred.shape)[:-1]
    true_shape = list(y_true.shape)
    if true_shape != out_shape and true_shape != [*out_shape, 1]:
        raise ValueError(
            f"`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
            f"labels.shape={tuple(true_shape)} and logits.shape={tuple(y_pred.shape)}."
        )
    labels = _reshaped(math_ops.cast(y_true, dtypes.int64), [-1])
    flat_logits = _reshaped(logits, [-1, int(y_pred.shape[-1])])
    flat = nn_losses.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=flat_logits)
    return _reshaped(flat, out_shape)


def _reshaped(x: Tensor, shape: list) -> Tensor:
    """``reshape(x, shape)``; ``x`` itself when it has that shape already (a batch of
    labels ``[N]`` and logits ``[N, classes]``: no tape node for an identity)."""
    have = x._value.shape
    if len(have) == len(shape) and all(d == -1 or d == h for d, h in zip(shape, have, strict=True)):
        if shape.count(-1) <= 1 and (-1 not in shape or 0 not in have):
            return x
    return array_ops.reshape(x, shape)


# --- loss classes ---------------------------------------------------------------------
class MeanSquaredError(LossFunctionWrapper):
    """Mean of squared errors over the last axis, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="mean_squared_error") -> None:
        super().__init__(mean_squared_error, reduction=reduction, name=name)


class MeanAbsoluteError(LossFunctionWrapper):
    """Mean of absolute errors over the last axis, then reduced."""

    def __init__(self, reduction=ReductionV2.AUTO, name="mean_absolute_error") -> None:
        super().__init__(mean_absolute_error, reduction=reduction, name=name)


class BinaryCrossentropy(LossFunctionWrapper):
    """Binary cross-entropy (labels 0/1, predictions probabilities or logits)."""

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction=ReductionV2.AUTO,
        name="binary_crossentropy",
    ) -> None:
        super().__init__(
            binary_crossentropy,
            reduction=reduction,
            name=name,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits = from_logits


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy with one-hot labels."""

    def __init__(
        self,
        from_logits=False,
        label_smoothing=0.0,
        axis=-1,
        reduction=ReductionV2.AUTO,
        name="categorical_crossentropy",
    ) -> None:
        super().__init__(
            categorical_crossentropy,
            reduction=reduction,
            name=name,
            from_logits=from_logits,
            label_smoothing=label_smoothing,
            axis=axis,
        )
        self.from_logits = from_logits


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy with integer class labels."""

    def __init__(
        self, from_logits=False, reduction=ReductionV2.AUTO, name="sparse_categorical_crossentropy"
    ) -> None:
        super().__init__(
            sparse_categorical_crossentropy,
            reduction=reduction,
            name=name,
            from_logits=from_logits,
        )
        self.from_logits = from_logits

    def call(self, y_true, y_pred) -> Tensor:
        # Labels carry no class axis: no rank matching here (the function checks shapes).
        return self.fn(y_true, y_pred, **self._fn_kwargs)


# --- names ------------------------------------------------------------------------------
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
Huber = regression_losses.Huber
LogCosh = regression_losses.LogCosh
KLDivergence = regression_losses.KLDivergence
Poisson = regression_losses.Poisson
CosineSimilarity = regression_losses.CosineSimilarity
MeanAbsolutePercentageError = regression_losses.MeanAbsolutePercentageError
MeanSquaredLogarithmicError = regression_losses.MeanSquaredLogarithmicError
Hinge = regression_losses.Hinge
SquaredHinge = regression_losses.SquaredHinge

_FUNCTIONS = {
    fn.__name__: fn
    for fn in (
        mean_squared_error,
        mean_absolute_error,
        mean_absolute_percentage_error,
        mean_squared_logarithmic_error,
        binary_crossentropy,
        categorical_crossentropy,
        sparse_categorical_crossentropy,
        huber,
        log_cosh,
        kl_divergence,
        poisson,
        cosine_similarity,
        hinge,
        squared_hinge,
    )
}
_FUNCTIONS.update(
    {
        "mse": mse, "MSE": mse, "mae": mae, "MAE": mae, "mape": mape, "MAPE": mape,
        "msle": msle, "MSLE": msle, "kld": kld, "KLD": kld, "logcosh": log_cosh,
        "kullback_leibler_divergence": kl_divergence,
    }
)  # fmt: skip
_CLASSES = {
    cls.__name__: cls
    for cls in (
        MeanSquaredError,
        MeanAbsoluteError,
        BinaryCrossentropy,
        CategoricalCrossentropy,
        SparseCategoricalCrossentropy,
        Huber,
        LogCosh,
        KLDivergence,
        Poisson,
        CosineSimilarity,
        MeanAbsolutePercentageError,
        MeanSquaredLogarithmicError,
        Hinge,
        SquaredHinge,
    )
}


def serialize(loss) -> dict | str:
    """A loss object as Keras 2's ``{'module', 'class_name', 'config', 'registered_name'}``
    dict; a loss function as its name.

    Raises:
        ValueError: a function that is not one of Keras's (it has no name to save).
    """
    if isinstance(loss, Loss):
        return {
            "module": "keras.losses",
            "class_name": type(loss).__name__,
            "config": loss.get_config(),
            "registered_name": None if type(loss).__name__ in _CLASSES else type(loss).__name__,
        }
    name = getattr(loss, "__name__", None)
    if name in _FUNCTIONS and _FUNCTIONS[name] is loss:
        return name
    if callable(loss) and name:
        return name  # a custom function: load it back with custom_objects={name: fn}
    raise ValueError(f"Cannot serialize {loss!r}: it is not a loss object or a named function.")


def deserialize(config, custom_objects=None):
    """A loss function from its name, or a loss object from :func:`serialize`'s dict.

    Raises:
        ValueError: a name that is no loss (pass custom losses in ``custom_objects``).
    """
    custom = with_custom_objects(custom_objects)
    if isinstance(config, str):
        found = custom.get(config) or _FUNCTIONS.get(config)
        if found is None and config in _CLASSES:
            found = _CLASSES[config]()
        if found is None:
            raise ValueError(
                f"Could not interpret loss function identifier {config!r}: Unknown loss function: "
                f"{config!r}. Use one of {sorted(_FUNCTIONS)}, a loss "
                "class name, or pass custom losses in `custom_objects`."
            )
        return found
    name = str(config.get("class_name", ""))
    cls = custom.get(name) or _CLASSES.get(name)
    if cls is None:
        raise ValueError(
            f"Could not interpret loss function identifier {name!r}: Unknown loss function: "
            f"{name!r}. Use one of {sorted(_CLASSES)}, or pass the "
            "class in `custom_objects`."
        )
    if isinstance(cls, type):
        return cls.from_config(config.get("config") or {})
    return cls


def get(identifier, custom_objects=None):
    """A loss from a function name (``'mse'``), a class name, a config dict, a loss object or
    a callable (``None`` stays ``None``).

    Raises:
        ValueError: the identifier names no loss, or is of another kind.
    """
    if identifier is None or isinstance(identifier, Loss) or callable(identifier):
        return identifier
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier, custom_objects)
    raise ValueError(
        f"Could not interpret loss function identifier: {identifier!r}; use one of "
        f"{sorted(_FUNCTIONS)}, a loss object or a config dict."
    )
