"""``tf.keras.losses.Loss`` and ``LossFunctionWrapper``: the base classes of the loss objects.

A loss object computes per-example losses with ``call(y_true, y_pred)``, weights them by
``sample_weight`` and reduces them as its ``reduction`` says (see
:mod:`simdist.keras.losses_utils`). Under a ``tf.distribute`` strategy, outside Keras's own
training loop, reduction ``AUTO`` or ``SUM_OVER_BATCH_SIZE`` raises ``ValueError``:
per-replica means would then be summed across replicas, so the user must reduce with ``SUM``
or ``NONE`` and divide by the global batch size.
"""

from __future__ import annotations

from collections.abc import Callable

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops
from simdist.core.tensor import Tensor
from simdist.keras.engine.masking import mask_of
from simdist.keras.losses_utils import (
    ReductionV2,
    apply_valid_mask,
    compute_weighted_loss,
    in_strategy,
    squeeze_or_expand_dimensions,
)

__all__ = ["Loss", "LossFunctionWrapper"]

_STRATEGY_MESSAGE = (
    "Please use `tf.keras.losses.Reduction.SUM` or `tf.keras.losses.Reduction.NONE` for loss "
    "reduction when losses are used with `tf.distribute.Strategy` outside of the built-in "
    "training loops (loss {name!r} has reduction {reduction!r}). Implement "
    "SUM_OVER_BATCH_SIZE with the global batch size instead: create the loss with "
    "reduction=tf.keras.losses.Reduction.NONE and compute "
    "tf.reduce_sum(loss_obj(labels, predictions)) * (1. / global_batch_size), or use "
    "tf.nn.compute_average_loss."
)


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
        mask = _combined_mask(mask_of(y_pred), mask_of(losses))
        if mask is not None:  # a Keras mask: the mean is over the unmasked elements
            losses = convert_to_tensor(losses)
            sample_weight = apply_valid_mask(losses, sample_weight, mask, reduction)
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


def _combined_mask(a, b):
    if a is None or b is None:
        return a if b is None else b
    return math_ops.logical_and(a, b)


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
        name = getattr(self.fn, "__name__", None)
        return {**super().get_config(), **self._fn_kwargs, "fn": name}

    @classmethod
    def from_config(cls, config: dict) -> Loss:
        config = dict(config)
        config.pop("fn", None)
        return cls(**config)
