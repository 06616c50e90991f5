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


def training_config(model) -> dict | None:
    """The compile settings of ``model`` (None when it is not compiled)."""
    optimizer = getattr(model, "optimizer", None)
    if not getattr(model, "_is_compiled", False) or optimizer is None:
        return None
    loss = getattr(model, "loss", None)
    if loss is not None and not isinstance(loss, str):
        loss = losses_lib.serialize(loss)
    return {
        "optimizer": optimizers_lib.serialize(optimizer),
        "loss": loss,
        "metrics": [_metric_entry(m) for m in getattr(model, "_compiled_metrics", [])],
    }


def compile_args(config: dict, custom_objects=None) -> dict:
    """``{'optimizer', 'loss', 'metrics'}`` for ``model.compile`` from a training config.

    Raises:
        ValueError: a loss, metric or optimizer that names nothing known (the message says
            which; pass custom ones in ``custom_objects``).
    """
    custom = dict(custom_objects or {})
    loss = config.get("loss")
    if loss is not None:
        loss = custom.get(loss) if isinstance(loss, str) and loss in custom else loss
        loss = losses_lib.get(loss, custom)
    metrics = []
    for entry in config.get("metrics") or []:
        if isinstance(entry, str) and entry in ("accuracy", "acc"):
            metrics.append(entry)  # compile picks the accuracy from the shapes again
        elif isinstance(entry, str) and entry in custom:
            metrics.append(custom[entry])
        else:
            metrics.append(metrics_lib.get(entry, custom))
    return {
        "optimizer": optimizers_lib.get(config["optimizer"], custom),
        "loss": loss,
        "metrics": metrics,
    }
