"""Loss scaling rules: `tf.nn.compute_average_loss`, `scale_regularization_loss`, Mean metric.

TF sources read for these rules: tensorflow/python/ops/nn_impl_distribute.py
(`compute_average_loss`, `scale_regularization_loss`), tensorflow/python/ops/losses/util.py
(`check_per_example_loss_rank`, `scale_losses_by_sample_weight`,
`squeeze_or_expand_dimensions`), and the custom-training tutorial's loss section and its
"do not track the training loss with tf.metrics.Mean" example.

All arithmetic is float64. (TF multiplies by sample weights in float32 and casts back to
the loss dtype; the reference states the exact value.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _weighted(per_example_loss: np.ndarray, sample_weight: Any) -> np.ndarray:
    """Loss times weight after TF's squeeze-or-expand rule for the weight's rank.

    A scalar weight broadcasts; a weight one rank higher than the loss loses its last
    (size-1) dimension; a weight one rank lower gains a last dimension; then the two are
    multiplied with broadcasting.
    """
    weight = np.asarray(sample_weight, dtype=np.float64)
    if weight.ndim != 0:
        rank_diff = weight.ndim - per_example_loss.ndim
        if rank_diff == 1:
            if weight.shape[-1] != 1:
                raise ValueError(
                    f"sample_weight of shape {weight.shape} has one more dimension than "
                    f"the loss {per_example_loss.shape}, and it is not of size 1"
                )
            weight = weight[..., 0]
        elif rank_diff == -1:
            weight = weight[..., np.newaxis]
    try:
        return per_example_loss * weight
    except ValueError:
        raise ValueError(
            f"sample_weight of shape {np.shape(sample_weight)} cannot be broadcast to the "
            f"per-example loss of shape {per_example_loss.shape}"
        ) from None


def compute_average_loss(
    per_example_loss: Any,
    sample_weight: Any = None,
    global_batch_size: int | None = None,
    num_replicas_in_sync: int = 1,
) -> np.float64:
    """`tf.nn.compute_average_loss`: sum(loss * weight) / global_batch_size.

    TF rules (nn_impl_distribute.py):
    * the per-example loss must have rank >= 1 (ValueError "Invalid value passed for
      `per_example_loss`. Expected a tensor with at least rank 1. ...");
    * with a sample weight the losses are scaled by it first (see `_weighted`);
    * the sum is over every element of the (weighted) loss;
    * `global_batch_size=None` means (size of the loss's first dimension) x
      (number of replicas in sync) — correct only when every replica holds the same
      number of examples;
    * the global batch size must be an integer (TypeError) and non-negative (TF raises
      InvalidArgumentError; here ValueError);
    * the division is `div_no_nan`: a global batch size of 0 gives 0.

    The tutorial's example: replicas with losses [2, 3] and [4, 5], global batch 4, give
    1.25 and 2.25; their SUM across replicas, 3.5, is the loss of the global batch.

    Args:
      per_example_loss: array-like of rank >= 1.
      sample_weight: optional weights (scalar, same shape, or one rank off).
      global_batch_size: the global batch size, or None.
      num_replicas_in_sync: replicas in sync, used only when global_batch_size is None.

    Returns:
      The scaled loss, a float64 scalar.

    Raises:
      ValueError: rank-0 loss, negative global batch size, unbroadcastable weights.
      TypeError: a non-integer global batch size.

    Example (the tutorial's replica 0):
      >>> float(compute_average_loss([2.0, 3.0], global_batch_size=4))
      1.25
    """
    loss = np.asarray(per_example_loss, dtype=np.float64)
    if loss.ndim == 0:
        raise ValueError(
            "Invalid value passed for `per_example_loss`. Expected a tensor with at least "
            f"rank 1. Received per_example_loss={per_example_loss!r} with rank 0"
        )
    if sample_weight is not None:
        loss = _weighted(loss, sample_weight)
    if global_batch_size is None:
        global_batch_size = loss.shape[0] * num_replicas_in_sync
    if isinstance(global_batch_size, (bool, np.bool_)) or not isinstance(
        global_batch_size, (int, np.integer)
    ):
        raise TypeError(f"global_batch_size must be an integer, got {global_batch_size!r}")
    if global_batch_size < 0:
        raise ValueError(f"global_batch_size must be non-negative, got {global_batch_size}")
    total = np.float64(np.sum(loss))
    if global_batch_size == 0:
        return np.float64(0.0)
    return total / np.float64(global_batch_size)


def scale_regularization_loss(
    regularization_loss: Any, num_replicas_in_sync: int = 1
) -> np.float64:
    """`tf.nn.scale_regularization_loss`: sum(regularization_loss) / num_replicas.

    TF rule (nn_impl_distribute.py): the regularization loss is summed and divided by the
    number of replicas in sync, so that after the gradients are SUM-reduced across
    replicas it counts once.

    Args:
      regularization_loss: array-like (any rank).
      num_replicas_in_sync: replicas in sync (>= 1).

    Returns:
      A float64 scalar.

    Raises:
      ValueError: num_replicas_in_sync < 1.
    """
    if num_replicas_in_sync < 1:
        raise ValueError(f"num_replicas_in_sync must be at least 1, got {num_replicas_in_sync}")
    return np.float64(np.sum(np.asarray(regularization_loss, dtype=np.float64))) / np.float64(
        num_replicas_in_sync
    )


def mean_metric(values: Sequence[Any], sample_weights: Sequence[Any] | None = None) -> np.float64:
    """The result of a `tf.keras.metrics.Mean` fed `values`: total / count.

    Each update adds sum(value * weight) to the total and sum(weight) (the element count
    without weights) to the count. Fed the per-replica *scaled* losses, it reports their
    average, not the global loss: the tutorial's example gives (1.25 + 2.25) / 2 = 1.75
    where the correct loss is 3.5 — too small by the number of replicas. A count of 0
    gives 0 (`div_no_nan`).

    Args:
      values: the values given to `update_state`, in order (array-likes).
      sample_weights: optional weights, one per value.

    Returns:
      total / count as a float64.
    """
    total = np.float64(0.0)
    count = np.float64(0.0)
    weights = sample_weights if sample_weights is not None else [None] * len(values)
    for value, weight in zip(values, weights, strict=True):
        v = np.asarray(value, dtype=np.float64)
        w = (
            np.ones_like(v)
            if weight is None
            else np.broadcast_to(np.asarray(weight, dtype=np.float64), v.shape)
        )
        total += np.sum(v * w)
        count += np.sum(w)
    return np.float64(0.0) if count == 0 else total / count
