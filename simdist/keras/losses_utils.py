"""Loss reductions (``tf.keras.losses.Reduction``) and sample weighting, as Keras 2 does them.

A loss class first computes a per-example loss (pointwise losses already average over the
last axis), multiplies it by ``sample_weight`` (broadcast after matching ranks), then
reduces: ``NONE`` keeps the per-example values, ``SUM`` adds them, ``SUM_OVER_BATCH_SIZE``
divides that sum by the number of elements (not by the sum of weights), and ``AUTO`` means
``SUM_OVER_BATCH_SIZE`` outside a distribution strategy. The arithmetic is done in float32
and the result is cast back to the per-example loss's dtype.
"""

from __future__ import annotations

from simdist.core import dtypes
from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor

__all__ = [
    "apply_mask",
    "apply_valid_mask",
    "ReductionV2",
    "Reduction",
    "compute_weighted_loss",
    "reduce_weighted_loss",
    "squeeze_or_expand_dimensions",
    "remove_squeezable_dimensions",
    "in_strategy",
    "prepare_labels",
    "match_dtype_and_rank",
]


class ReductionV2:
    """Names of the reductions a loss object can apply to its per-example losses."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key) -> None:
        """Raises ValueError for a reduction name that is not one of :meth:`all`."""
        if key not in cls.all():
            raise ValueError(
                f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"; use '
                "tf.keras.losses.Reduction.NONE, SUM, SUM_OVER_BATCH_SIZE or AUTO."
            )


Reduction = ReductionV2


def in_strategy() -> bool:
    """True inside a ``tf.distribute`` strategy's scope or replica function."""
    return state.replica_context is not None or bool(state.strategy_stack)


def prepare_labels(y_true, y_pred) -> tuple[Tensor, Tensor]:
    """``(y_true, y_pred)`` as tensors: non-float predictions cast to ``floatx``, labels cast
    to the predictions' dtype (what every Keras 2 loss function does first)."""
    from simdist.keras import backend

    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = math_ops.cast(y_pred, backend.floatx())
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    return y_true, y_pred


def match_dtype_and_rank(y_true, y_pred, sample_weight=None):
    """What Keras 2's ``compile``d loss does to labels before calling any loss (its shape rule).

    Labels of rank 1 against predictions of rank 2 gain a trailing axis (so ``'mse'`` with
    labels ``(64,)`` and predictions ``(64, 10)`` compares each label with all 10 outputs,
    by broadcasting); so does a rank-1 ``sample_weight``. Float labels take the predictions'
    float dtype, integer labels their integer dtype; the weights take the predictions' dtype.
    Returns ``(y_true, y_pred, sample_weight)``.
    """
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    if y_true.shape.rank == 1 and y_pred.shape.rank == 2:
        y_true = array_ops.expand_dims(y_true, -1)
    if sample_weight is not None:
        sample_weight = convert_to_tensor(sample_weight)
        if sample_weight.shape.rank == 1 and y_pred.shape.rank == 2:
            sample_weight = array_ops.expand_dims(sample_weight, -1)
        sample_weight = math_ops.cast(sample_weight, y_pred.dtype)
    both_float = y_true.dtype.is_floating and y_pred.dtype.is_floating
    both_int = y_true.dtype.is_integer and y_pred.dtype.is_integer
    if both_float or both_int:
        y_true = math_ops.cast(y_true, y_pred.dtype)
    return y_true, y_pred, sample_weight


def remove_squeezable_dimensions(labels: Tensor, predictions: Tensor, expected_rank_diff=0):
    """Drop a trailing size-1 axis from whichever side has one axis more than expected."""
    rank_diff = predictions.shape.rank - labels.shape.rank
    if rank_diff == expected_rank_diff + 1 and predictions.shape[-1] == 1:
        predictions = array_ops.squeeze(predictions, [-1])
    elif rank_diff == expected_rank_diff - 1 and labels.shape[-1] == 1:
        labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def squeeze_or_expand_dimensions(y_pred: Tensor, y_true=None, sample_weight=None):
    """Match ranks as Keras does before a loss or a weighting.

    ``y_pred`` and ``y_true`` differing by one trailing size-1 axis lose it; a
    ``sample_weight`` one axis shorter than ``y_pred`` gains a trailing axis, one axis longer
    with a trailing 1 loses it. Returns ``(y_pred, y_true, sample_weight)``.
    """
    if y_true is not None:
        y_true, y_pred = remove_squeezable_dimensions(y_true, y_pred)
    if sample_weight is None:
        return y_pred, y_true, None
    weights_rank = sample_weight.shape.rank
    if weights_rank == 0:
        return y_pred, y_true, sample_weight
    rank_diff = weights_rank - y_pred.shape.rank
    if rank_diff == 1 and sample_weight.shape[-1] == 1:
        sample_weight = array_ops.squeeze(sample_weight, [-1])
    elif rank_diff == -1:
        sample_weight = array_ops.expand_dims(sample_weight, -1)
    return y_pred, y_true, sample_weight


def apply_mask(values: Tensor, sample_weight, mask):
    """``sample_weight`` times the Keras ``mask`` (as ``values``' dtype); the mask alone when
    there is no weight; ``sample_weight`` unchanged when there is no mask."""
    if mask is None:
        return sample_weight
    mask = math_ops.cast(convert_to_tensor(mask), values.dtype)
    if sample_weight is None:
        return mask
    weight = math_ops.cast(convert_to_tensor(sample_weight), mask.dtype)
    mask, _, weight = squeeze_or_expand_dimensions(mask, sample_weight=weight)
    return math_ops.multiply(weight, mask)


def apply_valid_mask(losses: Tensor, sample_weight, mask, reduction: str):
    """As Keras 2: with a mask and a mean reduction, each valid element weighs
    ``elements / valid elements``, so the mean is over the valid elements only."""
    if mask is None:
        return sample_weight
    mask = math_ops.cast(convert_to_tensor(mask), losses.dtype)
    if reduction in (ReductionV2.AUTO, ReductionV2.SUM_OVER_BATCH_SIZE):
        total = float(mask.shape.num_elements())
        valid = reduction_ops.reduce_sum(mask)
        mask = math_ops.multiply(mask, math_ops.divide(total, valid))
    return apply_mask(losses, sample_weight, mask)


def reduce_weighted_loss(weighted_losses: Tensor, reduction: str = ReductionV2.SUM_OVER_BATCH_SIZE):
    """Apply ``reduction`` (not ``AUTO``) to already weighted per-example losses."""
    if reduction == ReductionV2.NONE:
        return weighted_losses
    total = reduction_ops.reduce_sum(weighted_losses)
    if reduction == ReductionV2.SUM_OVER_BATCH_SIZE:
        count = weighted_losses.shape.num_elements()
        # an empty batch gives 0 (Keras divides with divide_no_nan)
        total = (
            math_ops.multiply(total, 0.0) if count == 0 else math_ops.divide(total, float(count))
        )
    return total


def compute_weighted_loss(
    losses, sample_weight=None, reduction: str = ReductionV2.SUM_OVER_BATCH_SIZE
) -> Tensor:
    """Weight per-example ``losses`` by ``sample_weight`` (default 1) and reduce them.

    Args:
        losses: per-example losses, any shape.
        sample_weight: ``None``, a scalar, or a tensor that broadcasts to ``losses`` after
            rank matching (see :func:`squeeze_or_expand_dimensions`).
        reduction: a :class:`ReductionV2` name; ``AUTO`` means ``SUM_OVER_BATCH_SIZE``.

    Returns:
        The reduced loss, in the dtype of ``losses``.

    Raises:
        ValueError: an unknown reduction.
    """
    ReductionV2.validate(reduction)
    if reduction == ReductionV2.AUTO:
        reduction = ReductionV2.SUM_OVER_BATCH_SIZE
    losses = convert_to_tensor(losses)
    input_dtype = losses.dtype
    losses = math_ops.cast(losses, dtypes.float32)
    if sample_weight is None:
        weighted = losses
    else:
        weight = math_ops.cast(convert_to_tensor(sample_weight), dtypes.float32)
        losses, _, weight = squeeze_or_expand_dimensions(losses, None, weight)
        weighted = math_ops.multiply(losses, weight)
    loss = reduce_weighted_loss(weighted, reduction)
    return math_ops.cast(loss, input_dtype)
