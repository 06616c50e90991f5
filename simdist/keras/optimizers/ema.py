"""``use_ema=True``: an optimizer's exponential moving average of the variables it trains.

Keras 2.11+ semantics (``tf.keras.optimizers.Optimizer``):

* when the optimizer first meets a variable (its first ``apply_gradients``, or ``build``) it
  makes its average, a copy of the variable's value then, distributed like the variable;
* every step, after all variables are updated, each average becomes
  ``ema_momentum * average + (1 - ema_momentum) * variable`` (the variable's new value);
* with ``ema_overwrite_frequency=k``, on every k-th step (``iterations + 1`` divisible by
  ``k``, ``iterations`` counted before the step) each variable is set to its average;
* ``finalize_variable_values(var_list)`` sets the variables to their averages; ``fit`` calls
  it with the model's trainable variables when training ends (before ``on_train_end``).

Under a strategy every copy of an average is updated on its device from that device's copy
of the variable. The averages are optimizer variables (``optimizer.variables``) and are
checkpointed as the slot ``average`` of their variable.
"""

from __future__ import annotations

import contextlib
import numbers

import numpy as np

from simdist.core.variables import Variable

__all__ = ["check_arguments", "create_average", "update_averages", "overwrite_with_averages"]


def check_arguments(ema_momentum, ema_overwrite_frequency) -> None:
    """Raises ValueError for a momentum outside [0, 1] or a frequency that is not an int >= 1."""
    if not isinstance(ema_momentum, numbers.Real) or not 0.0 <= float(ema_momentum) <= 1.0:
        raise ValueError(
            f"`ema_momentum` must be in the range [0, 1]. Received: ema_momentum={ema_momentum}"
        )
    if ema_overwrite_frequency and (
        not isinstance(ema_overwrite_frequency, numbers.Integral) or ema_overwrite_frequency < 1
    ):
        raise ValueError(
            "`ema_overwrite_frequency` must be an integer > 1 or None. Received: "
            f"ema_overwrite_frequency={ema_overwrite_frequency}"
        )


def create_average(optimizer, var):
    """The average of ``var``: its current value, distributed like it."""
    base = var.name[:-2] if var.name.endswith(":0") else var.name
    strategy = getattr(var, "distribute_strategy", None)
    scope = strategy.scope() if strategy is not None else contextlib.nullcontext()
    with scope:
        average = Variable(
            np.array(var.numpy(), copy=True),
            name=f"{optimizer.name}/{base}/average",
            dtype=var.dtype,
            trainable=False,
        )
    optimizer._variables.append(average)
    return average


def _averages_of(optimizer, variables: list) -> list:
    out = []
    for var in variables:
        average = optimizer._averages.get(var.ref())
        if average is None:
            raise ValueError(
                f"The optimizer keeps no moving average of variable {var.name}: it has not "
                "trained it. Pass the variables it trains (model.trainable_variables)."
            )
        out.append(average)
    return out


def _on_every_copy(strategy, target, fn, source) -> None:
    if strategy is None:
        strategy = getattr(target, "distribute_strategy", None)
    if strategy is None:
        fn(target, source)
    else:
        strategy.extended.update(target, fn, args=(source,))


def update_averages(optimizer, variables: list, strategy) -> None:
    """``average = m * average + (1 - m) * variable`` for each variable, on every copy."""
    momentum = optimizer.ema_momentum

    def blend(average, var):
        dtype = average.dtype.as_numpy_dtype
        old = np.asarray(average.numpy(), dtype)
        new = np.asarray(var.numpy(), dtype)
        average.assign(dtype(momentum) * old + dtype(1 - momentum) * new)

    for var, average in zip(variables, _averages_of(optimizer, variables), strict=True):
        _on_every_copy(strategy, average, blend, var)


def overwrite_with_averages(optimizer, variables: list, strategy) -> None:
    """Set each variable (every copy) to its average.

    Raises:
        ValueError: a variable the optimizer keeps no average of.
    """

    def copy(var, average):
        var.assign(average.numpy())

    for var, average in zip(variables, _averages_of(optimizer, variables), strict=True):
        _on_every_copy(strategy, var, copy, average)
