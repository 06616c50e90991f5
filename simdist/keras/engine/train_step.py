"""One step of Keras's loops under a strategy, and the bookkeeping around steps.

``run_step`` runs one global batch on every replica (inside the step function, as TF's
``train_function``), with the loss scaled by the global batch as ``compile`` does it;
``Executions`` fires batch callbacks once per ``steps_per_execution`` steps; ``logs`` and
``reset_metrics`` read and reset what ``compile`` tracks.
"""

from __future__ import annotations

import contextlib

import numpy as np

from simdist.core import nest
from simdist.core.context import state
from simdist.core.function import functions_run_eagerly
from simdist.core.ops import math_ops
from simdist.core.tape import GradientTape
from simdist.keras.engine import compile_utils
from simdist.keras.engine.data_adapter import unpack
from simdist.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer

# --- one step --------------------------------------------------------------------------------
_NO_SCOPE = contextlib.nullcontext()


def _global_batch(strategy, x) -> int:
    leaf = nest.flatten(x)[0]
    local = int(sum(np.shape(c)[0] for c in strategy.experimental_local_results(leaf)))
    return strategy.extended._host_sum(local)  # every worker's share of the global batch


def _run_step(model, batch, training: bool):
    """One global batch: returns ``(loss as a float, global batch size)``."""
    strategy = model.distribute_strategy
    x, y, sw = unpack(batch)
    if y is None:
        raise ValueError(
            "The data has no targets: pass y= (NumPy input) or a dataset of (x, y) pairs."
        )
    global_batch = _global_batch(strategy, x)
    n = strategy.num_replicas_in_sync

    class_weight = getattr(model, "_class_weight", None) if training else None
    scaling = training and isinstance(model.optimizer, LossScaleOptimizer)

    def step(x, y, sw):
        if class_weight is not None:
            weights = compile_utils.class_weights_for(class_weight, y)
            if sw is not None:
                weights = weights * np.asarray(sw._value if hasattr(sw, "_value") else sw)
            sw = weights.astype(np.float32)
        if training:
            with GradientTape() as tape:
                y_pred = model(x, training=True)
                loss, parts = compile_utils.replica_losses(
                    model, y, y_pred, sw, global_batch, n
                )
                scaled = model.optimizer.get_scaled_loss(loss) if scaling else loss
            variables = model.trainable_variables  # after the call: it may build the model
            with np.errstate(over="ignore", invalid="ignore") if scaling else _NO_SCOPE:
                # an overflowing float16 step is expected (the LossScaleOptimizer skips it)
                grads = tape.gradient(scaled, variables)
            if scaling:  # Keras 2's LossScaleOptimizer.minimize
                grads = model.optimizer.get_unscaled_gradients(grads)
            model.optimizer.apply_gradients(zip(grads, variables, strict=True))
        else:
            y_pred = model(x, training=False)
            loss, parts = compile_utils.replica_losses(model, y, y_pred, sw, global_batch, n)
        compile_utils.update_metrics(model, y, y_pred, sw)
        if len(parts) > 1:
            return loss, [p if p is not None else math_ops.multiply(loss, 0.0) for p in parts]
        return loss

    with _step_function(model):
        per_replica = strategy.run(step, args=(x, y, sw))
    if isinstance(per_replica, tuple):
        per_replica, per_output = per_replica
        outputs = [strategy.reduce("SUM", p, axis=None) for p in per_output]
        object.__setattr__(
            model, "_last_output_losses", [float(np.asarray(o._value)) for o in outputs]
        )
    loss = strategy.reduce("SUM", per_replica, axis=None)
    return float(np.asarray(loss._value)), global_batch


def track_loss(model, loss: float, size: int) -> None:
    """Add a step's loss (and each output's, with several outputs) to the epoch's means."""
    model._loss_tracker[0] += loss * size
    model._loss_tracker[1] += size
    trackers = getattr(model, "_output_loss_trackers", None)
    if trackers:
        for tracker, value in zip(trackers.values(), model._last_output_losses, strict=True):
            tracker[0] += value * size
            tracker[1] += size


class _Executions:
    """Batch callbacks per execution of ``steps_per_execution`` steps, as Keras calls them:
    ``begin(first step)`` before the execution, ``end(last step, logs)`` after it (the last
    execution of an epoch may be shorter)."""

    def __init__(self, on_begin, on_end, steps_per_execution: int) -> None:
        self._on_begin, self._on_end = on_begin, on_end
        self._spe = steps_per_execution
        self._count = 0  # steps in the open execution
        self._last_step = None

    def begin(self, step: int) -> None:
        if self._count == 0:
            self._on_begin(step)

    def end(self, step: int, logs, last: bool) -> bool:
        """Count ``step``; close the execution when full or ``last``. Returns whether it
        closed (the caller checks ``stop_training`` then, as Keras does)."""
        self._count += 1
        self._last_step = step
        if self._count < self._spe and not last:
            return False
        self._count = 0
        self._on_end(step, logs())
        return True

    def finish(self, logs) -> None:
        """Close a partial execution left open when the data ran out."""
        if self._count:
            self._count = 0
            self._on_end(self._last_step, logs())


@contextlib.contextmanager
def _step_function(model):
    """Keras runs each step inside its train/test/predict ``tf.function`` (TPUStrategy
    requires it) unless the model was compiled with ``run_eagerly=True``."""
    if getattr(model, "_run_eagerly", False) or functions_run_eagerly():
        yield
        return
    state.function_depth += 1
    try:
        yield
    finally:
        state.function_depth -= 1


def _logs(model, tracker) -> dict:
    total, count = tracker
    logs = {"loss": total / count if count else 0.0}
    for name, (part, seen) in getattr(model, "_output_loss_trackers", {}).items():
        logs[name] = part / seen if seen else 0.0
    for metric in model._compiled_metrics:
        logs[metric.name] = float(np.asarray(metric.result()._value))
    return logs


def reset_metrics(model) -> None:
    """Zero the loss tracker and every compiled metric."""
    if getattr(model, "_is_compiled", False):
        model._loss_tracker[:] = [0.0, 0.0]
        for tracker in getattr(model, "_output_loss_trackers", {}).values():
            tracker[:] = [0.0, 0.0]
        for metric in model._compiled_metrics:
            metric.reset_state()


# --- fit ---------------------------------------------------------------------------------------
