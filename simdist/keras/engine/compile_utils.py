"""What ``Model.compile`` resolves, and the loss of one replica's step as Keras 2 computes it.

The loss of a step: per-example losses (a loss function, or a ``Loss`` object's ``call``,
averaged over any axes after the batch axis) are weighted by ``sample_weight``, summed, and
divided by the GLOBAL batch size (``tf.nn.compute_average_loss``), so summing the replicas'
values gives the mean over the global batch; a ``Loss`` with reduction ``SUM`` is summed
instead. Layer losses (``model.losses``) are added once, divided by the number of
replicas (``tf.nn.scale_regularization_loss``).
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops, nn_losses, reduction_ops
from simdist.keras import losses as losses_lib
from simdist.keras import metrics as metrics_lib
from simdist.keras import optimizers as optimizers_lib
from simdist.keras.losses_utils import ReductionV2, match_dtype_and_rank

__all__ = [
    "resolve_loss",
    "resolve_metrics",
    "replica_loss",
    "update_metrics",
    "get_optimizer",
    "metric_states",
    "restore_metric_states",
]


def get_optimizer(optimizer):
    """An optimizer instance from a name (``'sgd'``, ``'adam'``), config or instance."""
    return optimizers_lib.get(optimizer)


def resolve_loss(loss):
    """``(name, per_example_fn, sum_only)``: the loss to minimise.

    Raises:
        ValueError: no loss, or a loss that names nothing.
        TypeError: a list/dict of losses (multi-output models are not supported).
    """
    if loss is None:
        raise ValueError(
            "No loss to compute. Provide a `loss` argument in `compile()` (e.g. loss='mse')."
        )
    if isinstance(loss, (list, tuple, dict)):
        raise TypeError(
            "simdist's compile takes one loss (single-output models); got a "
            f"{type(loss).__name__} of losses."
        )
    resolved = losses_lib.get(loss)
    if isinstance(resolved, losses_lib.Loss):
        resolved._allow_sum_over_batch_size = True
        sum_only = resolved.reduction == ReductionV2.SUM
        name = resolved.name or type(resolved).__name__
        return name, resolved.call, sum_only
    name = loss if isinstance(loss, str) else getattr(resolved, "__name__", "loss")
    return name, resolved, False


def _per_example(values):
    values = convert_to_tensor(values)
    if values.shape.rank is not None and values.shape.rank > 1:
        values = reduction_ops.reduce_mean(values, axis=list(range(1, values.shape.rank)))
    elif values.shape.rank == 0:
        values = math_ops.multiply(values, np.ones((1,), values.dtype.as_numpy_dtype))
    return values


def replica_loss(model, y_true, y_pred, sample_weight, global_batch: int, num_replicas: int):
    """This replica's share of the step's loss (see the module docstring)."""
    _, fn, sum_only = model._compiled_loss
    y_true, y_pred, _ = match_dtype_and_rank(y_true, y_pred)  # Keras 2's label shape rule
    per_example = _per_example(fn(y_true, y_pred))
    if sum_only:
        weighted = per_example
        if sample_weight is not None:
            weight = math_ops.cast(convert_to_tensor(sample_weight), per_example.dtype)
            weighted = math_ops.multiply(per_example, weight)
        loss = reduction_ops.reduce_sum(weighted)
    else:
        loss = nn_losses.compute_average_loss(
            per_example, sample_weight=sample_weight, global_batch_size=global_batch
        )
    extra = model.losses
    if extra:
        total = extra[0]
        for value in extra[1:]:
            total = math_ops.add(total, value)
        total = math_ops.cast(convert_to_tensor(total), loss.dtype)
        loss = math_ops.add(loss, math_ops.divide(total, float(num_replicas)))
    return loss


# --- metrics ------------------------------------------------------------------------------
_BY_NAME = {
    "mse": metrics_lib.MeanSquaredError,
    "mean_squared_error": metrics_lib.MeanSquaredError,
    "sparse_categorical_accuracy": metrics_lib.SparseCategoricalAccuracy,
    "categorical_accuracy": metrics_lib.CategoricalAccuracy,
    "binary_accuracy": metrics_lib.BinaryAccuracy,
}


class _AutoAccuracy(metrics_lib.MeanMetricWrapper):
    """``'accuracy'`` in compile: the accuracy that fits the label and prediction shapes."""

    def __init__(self, name: str, loss_name: str) -> None:
        super().__init__(None, name=name)
        self._loss_name = loss_name

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        if self._fn is None:
            self._fn = self._choose(convert_to_tensor(y_true), convert_to_tensor(y_pred))
        if self._fn is metrics_lib.sparse_categorical_accuracy:
            matches = metrics_lib.sparse_categorical_accuracy(y_true, y_pred)
            metrics_lib.Mean.update_state(self, matches, sample_weight=sample_weight)
        else:
            super().update_state(y_true, y_pred, sample_weight)

    def _choose(self, y_true, y_pred):
        # Keras 2 picks from the shapes of the first batch, not from the loss.
        return metrics_lib.accuracy_for(y_true, y_pred)


def resolve_metrics(metrics, loss_name: str) -> list:
    """Metric objects for ``compile(metrics=...)`` (create them under the model's strategy).

    Raises:
        TypeError: ``metrics`` is not a list/tuple.
        ValueError: a name that is no metric.
    """
    if metrics is None:
        return []
    if isinstance(metrics, dict):
        raise TypeError("simdist's compile takes a list of metrics (single-output models).")
    if not isinstance(metrics, (list, tuple)):
        raise TypeError(
            f"Type of `metrics` argument not understood. Expected a list or dictionary, found: "
            f"{metrics!r}"
        )
    out = []
    for metric in metrics:
        if isinstance(metric, metrics_lib.Metric):
            out.append(metric)
        elif metric in ("accuracy", "acc"):
            out.append(_AutoAccuracy(metric, loss_name))
        elif isinstance(metric, str) and metric in _BY_NAME:
            out.append(_BY_NAME[metric](name=metric))
        elif callable(metric):
            out.append(metrics_lib.MeanMetricWrapper(metric, name=metric.__name__))
        else:
            raise ValueError(
                f"Unknown metric function: {metric!r}. Use one of 'accuracy', "
                f"{sorted(_BY_NAME)}, a metric object or a function."
            )
    return out


def update_metrics(model, y_true, y_pred, sample_weight) -> None:
    """Update every compiled metric with this replica's batch."""
    if y_true is None:
        return
    for metric in model._compiled_metrics:
        metric.update_state(y_true, y_pred, sample_weight=sample_weight)


def metric_states(model) -> list:
    """Each metric variable's per-replica component values (for BackupAndRestore)."""
    out = []
    for metric in model._compiled_metrics:
        for var in metric.variables:
            parts = getattr(var, "values", None)
            parts = parts if isinstance(parts, tuple) else (var,)
            out.append([np.asarray(p.numpy()).tolist() for p in parts])
    return out


def restore_metric_states(model, states) -> None:
    if not states:
        return
    variables = [v for m in model._compiled_metrics for v in m.variables]
    for var, values in zip(variables, states, strict=True):
        parts = getattr(var, "values", None)
        parts = parts if isinstance(parts, tuple) else (var,)
        for part, value in zip(parts, values, strict=True):
            part.assign(np.asarray(value, part.dtype.as_numpy_dtype))
