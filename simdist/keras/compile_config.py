"""What a saved model keeps of ``compile()``, and compiling a loaded model from it.

``training_config(model)`` gives Keras 2's ``training_config`` entry::

    {"optimizer": {"class_name": "Adam", "config": {...}},
     "loss": "mse" | {"module": "keras.losses", "class_name": "Huber", "config": {...}},
     "metrics": ["accuracy", {"class_name": "AUC", "config": {...}}, ...]}

A loss or metric given by name is kept as the name; a ``Loss`` / ``Metric`` object as its
class and config; a custom function as its ``__name__`` (found again through
``custom_objects`` at load). ``compile_args(training_config, custom_objects)`` turns it back
into ``compile`` arguments.
"""

from __future__ import annotations

from simdist.keras import losses as losses_lib
from simdist.keras import metrics as metrics_lib
from simdist.keras import optimizers as optimizers_lib
from simdist.keras.object_registration import with_custom_objects

__all__ = ["training_config", "compile_args"]


def _metric_entry(metric):
    fn = getattr(metric, "_fn", None)
    if type(metric).__name__ == "_AutoAccuracy":  # compile's 'accuracy' / 'acc'
        return metric.name
    if type(metric) in metrics_lib._CLASSES.values():
        return metrics_lib.serialize(metric)
    if fn is not None and getattr(fn, "__name__", None) == metric.name:
        return metric.name  # a metric function given by name (or a custom one)
    return metric.name


def _loss_entry(loss):
    if loss is None or isinstance(loss, str):
        return loss
    if isinstance(loss, dict):
        return {k: _loss_entry(v) for k, v in loss.items()}
    if isinstance(loss, (list, tuple)):
        return [_loss_entry(v) for v in loss]
    return losses_lib.serialize(loss)


def _output_metrics(model) -> dict:
    """Several outputs: ``{output: [entries]}``, each metric without its output prefix."""
    names = model._compiled_loss.names
    out: dict = {name: [] for name in names}
    for index, metric in zip(model._metric_outputs, model._compiled_metrics, strict=True):
        prefix = f"{names[index]}_"
        if type(metric).__name__ in ("MeanMetricWrapper", "_AutoAccuracy") and (
            metric.name.startswith(prefix)
        ):
            entry = metric.name[len(prefix) :]  # compile's name for it ('mae', 'accuracy')
        else:
            entry = _metric_entry(metric)
        out[names[index]].append(entry)
    return out


def training_config(model) -> dict | None:
    """The compile settings of ``model`` (None when it is not compiled).

    A model with several outputs keeps its losses as a list or dict (as compiled),
    ``loss_weights``, and its metrics by output name.
    """
    optimizer = getattr(model, "optimizer", None)
    if not getattr(model, "_is_compiled", False) or optimizer is None:
        return None
    config = {
        "optimizer": optimizers_lib.serialize(optimizer),
        "loss": _loss_entry(getattr(model, "loss", None)),
        "metrics": [_metric_entry(m) for m in getattr(model, "_compiled_metrics", [])],
    }
    if getattr(model, "_metric_outputs", None) is not None:
        config["metrics"] = _output_metrics(model)
        config["loss_weights"] = list(model._compiled_loss.weights)
    return config


def _metric_args(entries, custom: dict) -> list:
    metrics = []
    for entry in entries or []:
        if isinstance(entry, str) and entry in ("accuracy", "acc"):
            metrics.append(entry)  # compile picks the accuracy from the shapes again
        elif isinstance(entry, str) and entry in custom:
            metrics.append(custom[entry])
        elif isinstance(entry, str):
            metrics_lib.get(entry, custom)  # raises for a name that is no metric
            metrics.append(entry)  # compile resolves it, and names the metric after it
        else:
            metrics.append(metrics_lib.get(entry, custom))
    return metrics


def _loss_arg(loss, custom: dict):
    if loss is None:
        return None
    if isinstance(loss, dict) and "class_name" not in loss:
        return {k: _loss_arg(v, custom) for k, v in loss.items()}
    if isinstance(loss, list):
        return [_loss_arg(v, custom) for v in loss]
    loss = custom.get(loss) if isinstance(loss, str) and loss in custom else loss
    return losses_lib.get(loss, custom)


def compile_args(config: dict, custom_objects=None) -> dict:
    """``{'optimizer', 'loss', 'metrics'}`` for ``model.compile`` from a training config.

    Raises:
        ValueError: a loss, metric or optimizer that names nothing known (the message says
            which; pass custom ones in ``custom_objects``).
    """
    custom = with_custom_objects(custom_objects)
    entries = config.get("metrics")
    if isinstance(entries, dict):
        metrics = {name: _metric_args(items, custom) for name, items in entries.items()}
    else:
        metrics = _metric_args(entries, custom)
    args = {
        "optimizer": optimizers_lib.get(config["optimizer"], custom),
        "loss": _loss_arg(config.get("loss"), custom),
        "metrics": metrics,
    }
    if config.get("loss_weights") is not None:
        args["loss_weights"] = list(config["loss_weights"])
    return args
