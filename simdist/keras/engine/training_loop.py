"""``Model.compile``/``fit``/``evaluate``/``predict``/``train_on_batch``/``test_on_batch``.

Distribution follows the strategy the model was created under (Keras 2's rule, saved as
``model.distribute_strategy``): ``compile`` creates the optimizer and metrics in its scope;
each step distributes the global batch with ``experimental_distribute_dataset``, runs
forward, loss, gradients and ``apply_gradients`` per replica with ``strategy.run``
(``apply_gradients`` sums the replicas' gradients), and reports the step's loss as the SUM
over replicas of each replica's share (each share is divided by the global batch size, see
:mod:`simdist.keras.engine.compile_utils`). The loss shown and returned for an epoch is the
mean of the step losses weighted by each step's global batch size; metrics are
sync-on-read and report over all replicas.
"""

from __future__ import annotations

import numpy as np

from simdist.core import nest
from simdist.data.dataset import Dataset
from simdist.keras.engine import compile_utils
from simdist.keras.engine.callback_base import CallbackList
from simdist.keras.engine.data_adapter import DataHandler, unpack
from simdist.keras.engine.train_step import (
    _Executions,
    _logs,
    _run_step,
    _step_function,
    reset_metrics,
    track_loss,
)
from simdist.keras.mixed_precision.loss_scale_optimizer import LossScaleOptimizer

__all__ = ["compile", "fit", "evaluate", "predict", "train_on_batch", "test_on_batch"]


def _verbose(verbose) -> int:
    return 1 if verbose == "auto" else int(verbose)


def compile(
    model,
    optimizer="rmsprop",
    loss=None,
    metrics=None,
    loss_weights=None,
    weighted_metrics=None,
    run_eagerly=None,
    steps_per_execution=1,
    jit_compile=None,
    **kwargs,
) -> None:
    """Configure ``model`` for training (see ``Model.compile``).

    Raises:
        ValueError: an unknown optimizer, loss or metric; a bad ``steps_per_execution``.
        TypeError: unknown keyword arguments.
    """
    if kwargs:
        raise TypeError(f"Invalid keyword argument(s) in `compile()`: {sorted(kwargs)}.")
    if int(steps_per_execution) < 1:
        raise ValueError(f"steps_per_execution must be >= 1, got {steps_per_execution}.")
    if weighted_metrics is not None:
        raise NotImplementedError(
            "compile(weighted_metrics=...) is not yet in simdist; compiled metrics take "
            "sample_weight already."
        )
    with model.distribute_strategy.scope():
        opt = compile_utils.get_optimizer(optimizer)
        if model.dtype_policy.compute_dtype == "float16" and not isinstance(
            opt, LossScaleOptimizer
        ):  # Keras 2: loss scaling is needed for float16 models to converge as float32 ones
            opt = LossScaleOptimizer(opt)
        compiled = compile_utils.compile_losses(model, loss, loss_weights)
        loss_names = [spec[0] if spec else "loss" for spec in compiled.specs]
        multi = len(compiled.names) > 1
        resolved = compile_utils.resolve_metrics(
            metrics, loss_names if multi else loss_names[0], compiled.names
        )
    put = object.__setattr__  # compile state is not tracked as layers/weights
    put(model, "optimizer", opt)
    put(model, "loss", loss)
    put(model, "compiled_loss", compiled)
    put(model, "_compiled_loss", compiled)
    put(model, "_compiled_metrics", [m for _, m in resolved] if multi else resolved)
    put(model, "_metric_outputs", [i for i, _ in resolved] if multi else None)
    put(model, "_output_loss_trackers",
        {f"{n}_loss": [0.0, 0.0] for n in compiled.names} if multi else {})
    put(model, "_steps_per_execution", int(steps_per_execution))
    put(model, "_run_eagerly", bool(run_eagerly))
    put(model, "_is_compiled", True)
    put(model, "_loss_tracker", [0.0, 0.0])
    put(model, "stop_training", False)


def _check_compiled(model, what: str) -> None:
    if not getattr(model, "_is_compiled", False):
        raise RuntimeError(
            f"You must compile your model before {what}. Call "
            "`model.compile(optimizer, loss)`."
        )


def _split_validation(x, y, sample_weight, split: float):
    if isinstance(x, Dataset):
        raise ValueError(
            "`validation_split` is only supported for NumPy/tensor inputs; pass "
            "validation_data for a Dataset."
        )
    if not 0.0 < split < 1.0:
        raise ValueError(f"validation_split must be in (0, 1), got {split}.")
    n = len(nest.flatten(x)[0])
    cut = int(n * (1.0 - split))

    def part(value, lo, hi):
        return None if value is None else nest.map_structure(lambda a: np.asarray(a)[lo:hi], value)

    train = (part(x, 0, cut), part(y, 0, cut), part(sample_weight, 0, cut))
    return train, (part(x, cut, n), part(y, cut, n), part(sample_weight, cut, n))


def fit(
    model,
    x=None,
    y=None,
    batch_size=None,
    epochs=1,
    verbose="auto",
    callbacks=None,
    validation_split=0.0,
    validation_data=None,
    shuffle=True,
    class_weight=None,
    sample_weight=None,
    initial_epoch=0,
    steps_per_epoch=None,
    validation_steps=None,
    validation_batch_size=None,
    validation_freq=1,
    max_queue_size=10,
    workers=1,
    use_multiprocessing=False,
):
    """Train ``model`` (see ``Model.fit``); returns the ``History``.

    Raises:
        RuntimeError: the model is not compiled.
        ValueError: bad inputs (see :class:`DataHandler`), or ``class_weight``.
    """
    _check_compiled(model, "training/testing")
    if class_weight is not None and len(model._compiled_loss.names) > 1:
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    object.__setattr__(model, "_class_weight", class_weight)
    if validation_split and validation_data is None:
        (x, y, sample_weight), validation_data = _split_validation(
            x, y, sample_weight, validation_split
        )
    verbose = _verbose(verbose)
    strategy = model.distribute_strategy
    if getattr(strategy, "_should_use_with_coordinator", False):  # ParameterServerStrategy
        from simdist.keras.engine.coordinator_loop import fit_with_coordinator

        with strategy.scope():
            return fit_with_coordinator(
                model, x, y, epochs, steps_per_epoch, callbacks, verbose, initial_epoch,
                validation_data,
            )
    with strategy.scope():
        data = DataHandler(
            x, y, sample_weight, batch_size, steps_per_epoch, shuffle, strategy
        )
        cbs = CallbackList(
            callbacks,
            add_history=True,
            add_progbar=verbose != 0,
            model=model,
            verbose=verbose,
            epochs=epochs,
            steps=data.inferred_steps,
        )
        object.__setattr__(model, "stop_training", False)
        object.__setattr__(model, "_fit_data", data)
        object.__setattr__(model, "_resume_point", None)
        object.__setattr__(model, "_fit_position", (initial_epoch, 0))
        cbs.on_train_begin()
        start, skip = initial_epoch, 0
        resume = model._resume_point
        if resume is not None:
            start, skip = resume["epoch"], resume["step"]
        logs: dict = {}
        spe = model._steps_per_execution
        for epoch in range(start, epochs):
            reset_metrics(model)
            if resume is not None and epoch == start:
                model._loss_tracker[:] = resume["loss_tracker"]
                compile_utils.restore_metric_states(model, resume.get("metric_states"))
            cbs.on_epoch_begin(epoch)
            steps_done = epoch * (data.inferred_steps or 0) + skip
            executions = _Executions(cbs.on_train_batch_begin, cbs.on_train_batch_end, spe)
            for step, batch in data.epoch_batches(epoch, skip=skip, skip_persistent=steps_done):
                executions.begin(step)
                loss, size = _run_step(model, batch, training=True)
                track_loss(model, loss, size)
                object.__setattr__(model, "_fit_position", (epoch, step + 1))
                last = data.inferred_steps is not None and step + 1 >= data.inferred_steps
                if executions.end(step, lambda: _logs(model, model._loss_tracker), last):
                    if model.stop_training:
                        break
            executions.finish(lambda: _logs(model, model._loss_tracker))
            skip = 0
            epoch_logs = _logs(model, model._loss_tracker)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                val = _validation(
                    model, validation_data, validation_batch_size or batch_size,
                    validation_steps, cbs,
                )
                epoch_logs.update({f"val_{k}": v for k, v in val.items()})
            object.__setattr__(model, "_fit_position", (epoch + 1, 0))
            cbs.on_epoch_end(epoch, epoch_logs)
            logs = epoch_logs
            if model.stop_training or data.exhausted:
                break
        finalize = getattr(model.optimizer, "finalize_variable_values", None)
        if epochs > 0 and finalize is not None:  # as Keras: use_ema's averages replace the
            finalize(model.trainable_variables)  # trained weights when training ends
        cbs.on_train_end(logs)
    object.__setattr__(model, "_class_weight", None)
    return model.history


def _validation(model, validation_data, batch_size, steps, cbs) -> dict:
    if isinstance(validation_data, Dataset):
        vx, vy, vsw = validation_data, None, None
    elif isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3):
        vx, vy, vsw = (*validation_data, None)[:3]
    else:
        raise ValueError(
            "validation_data must be a Dataset, (x_val, y_val) or (x_val, y_val, "
            f"val_sample_weight); got {type(validation_data).__name__}."
        )
    saved = (list(model._loss_tracker), compile_utils.metric_states(model))
    result = _evaluate_loop(model, vx, vy, vsw, batch_size, steps, cbs)
    model._loss_tracker[:] = saved[0]
    compile_utils.restore_metric_states(model, saved[1])
    return result


# --- evaluate / predict ------------------------------------------------------------------------
def _evaluate_loop(model, x, y, sample_weight, batch_size, steps, cbs) -> dict:
    strategy = model.distribute_strategy
    data = DataHandler(x, y, sample_weight, batch_size, steps, False, strategy)
    reset_metrics(model)
    cbs.on_test_begin()
    executions = _Executions(
        cbs.on_test_batch_begin, cbs.on_test_batch_end, model._steps_per_execution
    )
    for step, batch in data.epoch_batches(0):
        executions.begin(step)
        loss, size = _run_step(model, batch, training=False)
        track_loss(model, loss, size)
        last = data.inferred_steps is not None and step + 1 >= data.inferred_steps
        executions.end(step, lambda: _logs(model, model._loss_tracker), last)
    executions.finish(lambda: _logs(model, model._loss_tracker))
    logs = _logs(model, model._loss_tracker)
    cbs.on_test_end(logs)
    return logs


def evaluate(
    model,
    x=None,
    y=None,
    batch_size=None,
    verbose="auto",
    sample_weight=None,
    steps=None,
    callbacks=None,
    max_queue_size=10,
    workers=1,
    use_multiprocessing=False,
    return_dict=False,
    **kwargs,
):
    """The loss (and metrics) over the data (see ``Model.evaluate``).

    Returns:
        A float (no metrics), a list ``[loss, metric...]``, or with ``return_dict`` a dict.

    Raises:
        RuntimeError: the model is not compiled.
    """
    _check_compiled(model, "training/testing")
    verbose = _verbose(verbose)
    strategy = model.distribute_strategy
    with strategy.scope():
        probe = DataHandler(x, y, sample_weight, batch_size, steps, False, None)
        cbs = CallbackList(
            callbacks, add_progbar=verbose != 0, model=model, verbose=verbose,
            epochs=1, steps=probe.inferred_steps,
        )
        logs = _evaluate_loop(model, x, y, sample_weight, batch_size, steps, cbs)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def predict(
    model,
    x,
    batch_size=None,
    verbose="auto",
    steps=None,
    callbacks=None,
    max_queue_size=10,
    workers=1,
    use_multiprocessing=False,
):
    """The model's outputs for ``x``, batch by batch, as NumPy arrays (see ``Model.predict``).

    Raises:
        ValueError: no data.
    """
    verbose = _verbose(verbose)
    strategy = model.distribute_strategy
    with strategy.scope():
        data = DataHandler(x, None, None, batch_size, steps, False, strategy)
        cbs = CallbackList(
            callbacks, add_progbar=verbose != 0, model=model, verbose=verbose,
            epochs=1, steps=data.inferred_steps,
        )
        cbs.on_predict_begin()
        outputs = []
        for step, batch in data.epoch_batches(0):
            cbs.on_predict_batch_begin(step)
            bx, _, _ = unpack(batch)
            with _step_function(model):
                per_replica = strategy.run(
                    lambda inputs: model(inputs, training=False), args=(bx,)
                )
            gathered = strategy.gather(per_replica, axis=0)
            arrays = nest.map_structure(lambda t: np.asarray(t._value), gathered)
            outputs.append(arrays)
            cbs.on_predict_batch_end(step, {"outputs": arrays})
        cbs.on_predict_end()
    if not outputs:
        raise ValueError(
            "Unexpected result of `predict_function` (Empty batch_outputs). Please use "
            "`Model.compile(..., run_eagerly=True)`, or `tf.config.run_functions_eagerly(True)` "
            "for more information of where went wrong, or file a issue/bug to `tf.keras`."
        )
    return nest.map_structure(lambda *parts: np.concatenate(parts, axis=0), *outputs)


# --- single batches ----------------------------------------------------------------------------
def _one_batch(model, x, y, sample_weight, training: bool, reset: bool, return_dict: bool):
    _check_compiled(model, "training/testing")
    strategy = model.distribute_strategy
    with strategy.scope():
        n = len(nest.flatten(x)[0])
        data = DataHandler(x, y, sample_weight, n, 1, False, strategy)
        for _, batch in data.epoch_batches(0):
            loss, size = _run_step(model, batch, training=training)
            track_loss(model, loss, size)
        logs = _logs(model, model._loss_tracker)
        if reset:
            reset_metrics(model)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def train_on_batch(
    model, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True,
    return_dict=False,
):
    """One training step on exactly this batch; returns its loss (and metrics)."""
    return _one_batch(model, x, y, sample_weight, True, reset_metrics, return_dict)


def test_on_batch(model, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
    """The loss (and metrics) of this batch, without training."""
    return _one_batch(model, x, y, sample_weight, False, reset_metrics, return_dict)
