"""What ``Model.compile`` resolves, and the loss of one replica's step as Keras 2 computes it.

The loss of a step: per-example losses (a loss function, or a ``Loss`` object's ``call``,
averaged over any axes after the batch axis) are weighted by ``sample_weight``, summed, and
divided by the GLOBAL batch size (``tf.nn.compute_average_loss``), so summing the replicas'
values gives the mean over the global batch; a ``Loss`` with reduction ``SUM`` is summed
instead. A loss function that returns one number (rank 0) for the batch is, as in
Keras 2, scaled by the mean sample weight and divided by the number of replicas. Layer
losses (``model.losses``) are added once, divided by the number of replicas
(``tf.nn.scale_regularization_loss``).

Several outputs (Keras 2): ``loss`` is one loss for every output, a list (one per output,
in order) or a dict by output name; ``loss_weights`` a list or dict (default 1 each); the
step's loss is ``sum(weight_i * loss_i)`` plus the layer losses, and each output's own loss
is logged as ``<output>_loss``. ``y`` (and ``sample_weight``) are then a list in output order
or a dict by output name; one ``sample_weight`` array applies to every output. Compiled
metrics apply to every output (``metrics=['mae']``), or per output (a list of lists, or a
dict by output name), and are named ``<output>_<metric>``. ``class_weight`` (single output
only) multiplies each example's sample weight by the weight of its class.
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops, nn_losses, reduction_ops
from simdist.keras import losses as losses_lib
from simdist.keras import losses_utils
from simdist.keras import metrics as metrics_lib
from simdist.keras import optimizers as optimizers_lib
from simdist.keras.engine import masking
from simdist.keras.losses_utils import ReductionV2, match_dtype_and_rank

__all__ = [
    "CompiledLoss",
    "compile_losses",
    "class_weights_for",
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


def output_names(model) -> list[str]:
    """The names Keras gives a model's outputs (a Functional model's output layers)."""
    names = getattr(model, "output_names", None)
    return list(names) if names else ["output_1"]


class CompiledLoss:
    """What ``compile(loss=, loss_weights=)`` resolved: one entry per output."""

    def __init__(self, names: list[str], specs: list, weights: list[float], nested) -> None:
        self.names = names  # output names, in output order
        self.specs = specs  # per output: (name, per_example_fn, sum_only)
        self.weights = weights
        self.nested = nested  # the model's output structure is a dict (by name)

    def __getitem__(self, index):  # (name, fn, sum_only) of a single-output model
        return self.specs[0][index]

    def __len__(self) -> int:
        return 3


def _per_output(value, names: list[str], what: str, default=None) -> list:
    """``value`` (one for all, a list in output order, or a dict by name) per output."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(
                f"Unknown entries in {what} dictionary: {unknown}. Only expected following "
                f"keys: {names}"
            )
        return [value.get(n, default) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(
                f"When passing a list as {what}, it should have one entry per model output. "
                f"The model has {len(names)} outputs, but you passed {what}={value!r}"
            )
        return list(value)
    return [value] * len(names)


def compile_losses(model, loss, loss_weights=None) -> CompiledLoss:
    """Resolve ``loss`` and ``loss_weights`` against the model's outputs.

    Raises:
        ValueError: no loss, a list/dict that does not fit the outputs, unknown names.
    """
    names = output_names(model)
    if len(names) == 1 and isinstance(loss, (list, tuple)) and len(loss) == 1:
        loss = loss[0]
    if len(names) == 1 and isinstance(loss, dict) and len(loss) == 1:
        loss = next(iter(loss.values()))
    per_output = _per_output(loss, names, "loss")
    if all(item is None for item in per_output):
        resolve_loss(None)  # raises the "No loss to compute" error
    specs = [None if item is None else resolve_loss(item) for item in per_output]
    weights = [
        1.0 if w is None else float(w)
        for w in _per_output(loss_weights, names, "loss_weights", 1.0)
    ]
    nested = isinstance(getattr(model, "_nested_outputs", None), dict)
    return CompiledLoss(names, specs, weights, nested)


def _split(value, compiled: CompiledLoss, what: str) -> list:
    """A structure of targets (or weights) as one entry per output."""
    names = compiled.names
    if len(names) == 1:
        if isinstance(value, dict) and len(value) == 1:
            return list(value.values())
        if isinstance(value, (list, tuple)) and len(value) == 1:
            return [value[0]]
        return [value]
    if value is None:
        return [None] * len(names)
    if isinstance(value, dict):
        missing = [n for n in names if n not in value]
        if missing and what == "y":
            raise ValueError(
                f"Found unexpected losses or metrics that do not correspond to any Model "
                f"output: {sorted(value)}. Valid mode output names: {names}."
            )
        return [value.get(n) for n in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(
                f"The model has {len(names)} outputs but {what} has {len(value)} entries."
            )
        return list(value)
    if what == "sample_weight":
        return [value] * len(names)
    raise ValueError(
        f"The model has {len(names)} outputs {names}; pass y as a list in that order or a "
        "dict by output name."
    )


def _predictions(y_pred, compiled: CompiledLoss) -> list:
    if len(compiled.names) == 1:
        return [
            y_pred[0]
            if isinstance(y_pred, (list, tuple)) and len(y_pred) == 1
            else (next(iter(y_pred.values())) if isinstance(y_pred, dict) else y_pred)
        ]
    if isinstance(y_pred, dict):
        return [y_pred[n] for n in compiled.names]
    return list(y_pred)


def _scalar_loss(value, sample_weight, sum_only: bool, num_replicas: int):
    """Keras 2's loss from a loss function that returns one number (rank 0) for the batch.

    It is broadcast against the sample weights and reduced as per-example losses are:
    ``value * mean(sample_weight)`` (``* sum`` for a SUM reduction; 0 for an empty batch),
    and a mean reduction then divides it by the number of replicas (Keras 2's
    ``scale_loss_for_distribution``), not by the global batch size.
    """
    if sample_weight is not None:
        weight = math_ops.cast(convert_to_tensor(sample_weight), value.dtype)
        total = reduction_ops.reduce_sum(weight)
        if sum_only:
            value = math_ops.multiply(value, total)
        else:
            count = int(np.prod(weight.shape.as_list()))
            mean = math_ops.divide(total, float(count)) if count else math_ops.multiply(total, 0.0)
            value = math_ops.multiply(value, mean)
    if sum_only or num_replicas == 1:
        return value
    return math_ops.divide(value, float(num_replicas))


def _one_loss(spec, y_true, y_pred, sample_weight, global_batch: int, num_replicas: int):
    _, fn, sum_only = spec
    mask = masking.mask_of(y_pred)
    y_true, y_pred, _ = match_dtype_and_rank(y_true, y_pred)  # Keras 2's label shape rule
    if mask is not None:
        return _masked_loss(fn(y_true, y_pred), sample_weight, mask, sum_only, global_batch)
    values = convert_to_tensor(fn(y_true, y_pred))
    if values.shape.rank == 0:
        return _scalar_loss(values, sample_weight, sum_only, num_replicas)
    per_example = _per_example(values)
    if sum_only:
        weighted = per_example
        if sample_weight is not None:
            weight = math_ops.cast(convert_to_tensor(sample_weight), per_example.dtype)
            weighted = math_ops.multiply(per_example, weight)
        return reduction_ops.reduce_sum(weighted)
    return nn_losses.compute_average_loss(
        per_example, sample_weight=sample_weight, global_batch_size=global_batch
    )


def _masked_loss(losses, sample_weight, mask, sum_only: bool, global_batch: int):
    """Keras 2's loss of a masked prediction: elements weighted by the mask (and by
    ``sample_weight``); a mean reduction averages over this replica's unmasked elements."""
    losses = convert_to_tensor(losses)
    weights = losses_utils.apply_mask(losses, sample_weight, mask)
    reduction = ReductionV2.SUM if sum_only else ReductionV2.SUM_OVER_BATCH_SIZE
    weights = losses_utils.apply_valid_mask(losses, weights, mask, reduction)
    _, _, weights = losses_utils.squeeze_or_expand_dimensions(losses, sample_weight=weights)
    weighted = math_ops.multiply(losses, math_ops.cast(weights, losses.dtype))
    if sum_only:
        return reduction_ops.reduce_sum(weighted)
    return nn_losses.compute_average_loss(_per_example(weighted), global_batch_size=global_batch)


def _masked_weights(y_pred, sample_weight):
    """A compiled metric's sample weights: times the prediction's Keras mask, if any."""
    mask = masking.mask_of(y_pred)
    if mask is None:
        return sample_weight
    return losses_utils.apply_mask(convert_to_tensor(y_pred), sample_weight, mask)


def replica_losses(model, y_true, y_pred, sample_weight, global_batch: int, num_replicas: int):
    """This replica's share of the step's loss, and of each output's (see the docstring)."""
    compiled = model._compiled_loss
    targets = _split(y_true, compiled, "y")
    predictions = _predictions(y_pred, compiled)
    weights = _split(sample_weight, compiled, "sample_weight")
    total, parts = None, []
    for spec, weight, yt, yp, sw in zip(
        compiled.specs, compiled.weights, targets, predictions, weights, strict=True
    ):
        if spec is None:
            parts.append(None)
            continue
        if yt is None:
            raise ValueError(f"No targets given for output '{compiled.names[len(parts)]}'.")
        value = _one_loss(spec, yt, yp, sw, global_batch, num_replicas)
        parts.append(value)
        scaled = value if weight == 1.0 else math_ops.multiply(value, weight)
        total = scaled if total is None else math_ops.add(total, scaled)
    extra = model.losses
    if extra:
        summed = extra[0]
        for value in extra[1:]:
            summed = math_ops.add(summed, value)
        summed = math_ops.cast(convert_to_tensor(summed), total.dtype)
        total = math_ops.add(total, math_ops.divide(summed, float(num_replicas)))
    return total, parts


def replica_loss(model, y_true, y_pred, sample_weight, global_batch: int, num_replicas: int):
    """This replica's share of the step's loss (see the module docstring)."""
    return replica_losses(model, y_true, y_pred, sample_weight, global_batch, num_replicas)[0]


def class_weights_for(class_weight: dict, y_true) -> np.ndarray:
    """Each example's class weight: ``class_weight[class of y]`` (one-hot y: its argmax).

    Raises:
        ValueError: keys that are not ``0..k-1``, or a class without a weight.
    """
    keys = sorted(class_weight)
    if keys != list(range(len(keys))):
        raise ValueError(
            "Expected `class_weight` to be a dict with keys from 0 to one less than the number "
            f"of classes, found {class_weight}"
        )
    table = np.asarray([float(class_weight[k]) for k in keys])
    y = np.asarray(convert_to_tensor(y_true)._value)
    if y.ndim >= 2 and y.shape[-1] > 1:
        classes = np.argmax(y, axis=-1)
    else:
        classes = y.reshape(y.shape[0], -1)[:, 0] if y.ndim >= 2 else y
    classes = classes.astype(np.int64)
    if classes.size and (classes.min() < 0 or classes.max() >= len(table)):
        raise ValueError(
            f"class_weight has weights for classes 0..{len(table) - 1} but the targets hold "
            f"class {int(classes.max() if classes.max() >= len(table) else classes.min())}."
        )
    return table[classes]


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


def _metric_object(metric, loss_name: str, name: str | None):
    if isinstance(metric, metrics_lib.Metric):
        return metric
    if metric in ("accuracy", "acc"):
        return _AutoAccuracy(name or metric, loss_name)
    if isinstance(metric, str) and metric in _BY_NAME:
        return _BY_NAME[metric](name=name or metric)
    if isinstance(metric, str):
        resolved = metrics_lib.get(metric)  # a metric object, or a function ('mae')
        if isinstance(resolved, metrics_lib.Metric):
            if name:
                object.__setattr__(resolved, "_name", name)
            return resolved
        return metrics_lib.MeanMetricWrapper(resolved, name=name or metric)
    if callable(metric):
        return metrics_lib.MeanMetricWrapper(metric, name=name or metric.__name__)
    raise ValueError(
        f"Unknown metric function: {metric!r}. Use one of 'accuracy', "
        f"{sorted(_BY_NAME)}, a metric object or a function."
    )


def _metric_label(metric) -> str:
    if isinstance(metric, metrics_lib.Metric):
        return metric.name
    return metric if isinstance(metric, str) else metric.__name__


def resolve_metrics(metrics, loss_name, names=None) -> list:
    """Metric objects for ``compile(metrics=...)`` (create them under the model's strategy).

    With several outputs (``names``), returns ``(output_index, metric)`` pairs.

    Raises:
        TypeError: ``metrics`` is not a list/tuple (or a dict for several outputs).
        ValueError: a name that is no metric.
    """
    multi = names is not None and len(names) > 1
    if metrics is None:
        return []
    if isinstance(metrics, dict) and not multi:
        metrics = next(iter(metrics.values())) if len(metrics) == 1 else list(metrics.values())
    if not isinstance(metrics, (list, tuple, dict)):
        raise TypeError(
            f"Type of `metrics` argument not understood. Expected a list or dictionary, found: "
            f"{metrics!r}"
        )
    if not multi:
        loss = loss_name[0] if isinstance(loss_name, list) else loss_name
        return [_metric_object(m, loss, None) for m in metrics]
    if isinstance(metrics, dict):
        per_output = _per_output(metrics, names, "metrics", [])
    elif metrics and all(isinstance(m, (list, tuple)) for m in metrics):
        per_output = _per_output(list(metrics), names, "metrics")
    else:
        per_output = [list(metrics)] * len(names)
    out = []
    for index, (name, items) in enumerate(zip(names, per_output, strict=True)):
        items = items if isinstance(items, (list, tuple)) else [items]
        for metric in items:
            label = f"{name}_{_metric_label(metric)}"
            out.append((index, _metric_object(metric, loss_name[index], label)))
    return out


def update_metrics(model, y_true, y_pred, sample_weight) -> None:
    """Update every compiled metric with this replica's batch."""
    if y_true is None:
        return
    outputs = getattr(model, "_metric_outputs", None)
    if not outputs:
        weights = _masked_weights(y_pred, sample_weight)
        for metric in model._compiled_metrics:
            metric.update_state(y_true, y_pred, sample_weight=weights)
        return
    compiled = model._compiled_loss
    targets = _split(y_true, compiled, "y")
    predictions = _predictions(y_pred, compiled)
    weights = _split(sample_weight, compiled, "sample_weight")
    for index, metric in zip(outputs, model._compiled_metrics, strict=True):
        weight = _masked_weights(predictions[index], weights[index])
        metric.update_state(targets[index], predictions[index], sample_weight=weight)


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
