"""``tf.keras.losses``: loss functions (per-example) and loss classes (reduced), Keras 2 style.

A loss *function* (``sparse_categorical_crossentropy(y_true, y_pred)``) returns one value per
example: categorical losses reduce the class axis, pointwise ones (``mean_squared_error``,
``binary_crossentropy``) average over the last axis. A loss *class* wraps a function and then
weights and reduces as ``reduction`` says (see :mod:`simdist.keras.losses_utils`).

Under a ``tf.distribute`` strategy, outside Keras's own training loop, a loss object whose
reduction is ``AUTO`` or ``SUM_OVER_BATCH_SIZE`` raises ``ValueError``: per-replica means
would then be summed across replicas, so the user must reduce with ``SUM`` or ``NONE`` and
divide by the global batch size.
"""

from __future__ import annotations

from collections.abc import Callable

from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, elementwise_ops, math_ops, nn_losses, reduction_ops
from simdist.core.tensor import Tensor
from simdist.keras import backend
from simdist.keras.losses_utils import (
    Reduction,
    ReductionV2,
    compute_weighted_loss,
    in_strategy,
    squeeze_or_expand_dimensions,
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

_STRATEGY_MESSAGE = (
    "Please use `tf.keras.losses.Reduction.SUM` or `tf.keras.losses.Reduction.NONE` for loss "
    "reduction when losses are used with `tf.distribute.Strategy` outside of the built-in "
    "training loops (loss {name!r} has reduction {reduction!r}). Implement "
    "SUM_OVER_BATCH_SIZE with the global batch size instead: create the loss with "
    "reduction=tf.keras.losses.Reduction.NONE and compute "
    "tf.reduce_sum(loss_obj(labels, predictions)) * (1. / global_batch_size), or use "
    "tf.nn.compute_average_loss."
)


# --- per-example loss functions ---------------------------------------------------------
def _prepare(y_true, y_pred) -> tuple[Tensor, Tensor]:
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, backend.floatx())
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    return y_true, y_pred


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
    labels = array_ops.reshape(math_ops.cast(y_true, dtypes.int64), [-1])
    flat_logits = array_ops.reshape(logits, [-1, int(y_pred.shape[-1])])
    flat = nn_losses.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=flat_logits)
    return array_ops.reshape(flat, out_shape)


# --- loss classes -----------------------------------------------------------------------
class Loss:
    """Base loss class: ``loss(y_true, y_pred, sample_weight=None)`` -> reduced loss.

    Subclasses implement ``call(y_true, y_pred)`` returning per-example losses.

    Raises:
        ValueError: an unknown ``reduction``.
    """

    def __init__(self, reduction: str = ReductionV2.AUTO, name: str | None = None) -> None:
        ReductionV2.validate(reduction)
        self.reduction = reduction
        self.name = name
        # Keras's own compile/fit set this: they divide by the global batch themselves.
        self._allow_sum_over_batch_size = False

    def __call__(self, y_true, y_pred, sample_weight=None) -> Tensor:
        """Per-example losses from ``call``, weighted by ``sample_weight``, then reduced.

        Raises:
            ValueError: reduction ``AUTO``/``SUM_OVER_BATCH_SIZE`` under a strategy.
        """
        reduction = self._get_reduction()
        losses = self.call(y_true, y_pred)
        return compute_weighted_loss(losses, sample_weight, reduction=reduction)

    def call(self, y_true, y_pred) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement call().")

    def _get_reduction(self) -> str:
        risky = self.reduction in (ReductionV2.AUTO, ReductionV2.SUM_OVER_BATCH_SIZE)
        if risky and not self._allow_sum_over_batch_size and in_strategy():
            raise ValueError(_STRATEGY_MESSAGE.format(name=self.name, reduction=self.reduction))
        if self.reduction == ReductionV2.AUTO:
            return ReductionV2.SUM_OVER_BATCH_SIZE
        return self.reduction

    def get_config(self) -> dict:
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> Loss:
        return cls(**config)


class LossFunctionWrapper(Loss):
    """A :class:`Loss` around a per-example loss function and its keyword arguments."""

    def __init__(self, fn: Callable, reduction=ReductionV2.AUTO, name=None, **kwargs) -> None:
        super().__init__(reduction=reduction, name=name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred) -> Tensor:
        y_pred = convert_to_tensor(y_pred)
        y_true = convert_to_tensor(y_true)
        y_pred, y_true, _ = squeeze_or_expand_dimensions(y_pred, y_true)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {**self._fn_kwargs, **super().get_config()}


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


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error

_FUNCTIONS = {
    "mean_squared_error": mean_squared_error,
    "mse": mean_squared_error,
    "mean_absolute_error": mean_absolute_error,
    "mae": mean_absolute_error,
    "binary_crossentropy": binary_crossentropy,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
}
_CLASSES = {
    cls.__name__: cls
    for cls in (
        MeanSquaredError,
        MeanAbsoluteError,
        BinaryCrossentropy,
        CategoricalCrossentropy,
        SparseCategoricalCrossentropy,
    )
}


def get(identifier):
    """A loss from a function name (``'mse'``), a class name, a loss object or a callable.

    Raises:
        ValueError: the identifier names no loss.
    """
    if identifier is None or isinstance(identifier, Loss) or callable(identifier):
        return identifier
    if isinstance(identifier, str):
        if identifier in _FUNCTIONS:
            return _FUNCTIONS[identifier]
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
    raise ValueError(
        f"Could not interpret loss function identifier: {identifier!r}; use one of "
        f"{sorted(_FUNCTIONS)} or a loss object."
    )
