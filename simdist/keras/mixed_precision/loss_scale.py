"""The dynamic loss scale's rule, and its state (Keras 2's ``_DynamicLossScaleState``).

After each step, given whether all of the step's (aggregated) gradients were finite:

* finite: ``counter += 1``; when ``counter`` reaches ``growth_steps`` the scale doubles
  (kept only if the doubled float32 value is finite) and ``counter = 0``;
* not finite: the step is skipped, ``scale = max(scale / 2, 1)`` and ``counter = 0``.

So from the default 2**15, 2000 finite steps in a row give 2**16 after the 2000th step; a
non-finite step halves the scale (never below 1). The scale is a float32 variable
(``current_loss_scale``) and the counter an int64 one (``good_steps``), as in TF's
checkpoints. :func:`next_state` is the rule on plain numbers; :class:`DynamicLossScale`
applies it to the variables.
"""

from __future__ import annotations

import numpy as np

from simdist.core import dtypes, trackable
from simdist.core.variables import Variable, VariableAggregation

__all__ = ["DynamicLossScale", "next_state", "all_finite"]


def next_state(scale: float, counter: int, finite: bool, growth_steps: int, multiplier=2.0):
    """``(scale, counter)`` after one step (the rule above, in float32 as TF computes it)."""
    scale32 = np.float32(scale)
    if not finite:
        return float(np.maximum(scale32 / np.float32(multiplier), np.float32(1))), 0
    if counter + 1 >= growth_steps:
        with np.errstate(over="ignore"):
            grown = scale32 * np.float32(multiplier)
        return (float(grown) if np.isfinite(grown) else float(scale32)), 0
    return float(scale32), counter + 1


def all_finite(arrays) -> bool:
    """Whether every element of every array is finite (TF's ``_is_all_finite``)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return all(bool(np.isfinite(np.asarray(a)).all()) for a in arrays)


class DynamicLossScale(trackable.Trackable):
    """The variables of a dynamic loss scale and their update (checkpointed as TF's)."""

    def __init__(self, initial_scale: float, growth_steps: int, multiplier: float = 2.0) -> None:
        self.initial_loss_scale = float(initial_scale)
        self.growth_steps = int(growth_steps)
        self.multiplier = float(multiplier)
        # aggregation NONE as TF: the scale is written in the cross-replica context only
        self.current_loss_scale = Variable(
            self.initial_loss_scale,
            name="current_loss_scale",
            dtype=dtypes.float32,
            trainable=False,
            aggregation=VariableAggregation.NONE,
        )
        self.counter = Variable(
            0,
            name="good_steps",
            dtype=dtypes.int64,
            trainable=False,
            aggregation=VariableAggregation.NONE,
        )

    def _trackable_children(self) -> dict:
        return {"current_loss_scale": self.current_loss_scale, "good_steps": self.counter}

    def scale(self) -> float:
        return float(np.asarray(self.current_loss_scale.numpy()))

    def update(self, finite: bool) -> None:
        """Apply the rule for one step whose gradients were (not) all finite."""
        scale, counter = next_state(
            self.scale(), int(self.counter.numpy()), finite, self.growth_steps, self.multiplier
        )
        self.current_loss_scale.assign(scale)
        self.counter.assign(counter)
