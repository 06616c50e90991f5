"""Batch normalization across replicas: what ``SyncBatchNormalization`` computes, plainly.

Keras 2's ``SyncBatchNormalization`` (tf_keras ``layers/normalization/batch_normalization.py``,
read for this rule) normalizes each replica's slice of a global batch with the statistics
of the WHOLE global batch: every replica contributes ``sum(x)``, ``sum(x**2)`` and its
example count, these are summed over replicas, and

    mean = total_sum / total_count
    variance = total_sum_of_squares / total_count - mean**2

(``total_count`` counts every value of a channel: examples times the other reduced axes).
Each replica then outputs ``(x - mean) / sqrt(variance + epsilon) * gamma + beta`` and moves
its moving statistics toward ``mean`` and ``variance`` by ``1 - momentum``.

Consequence (the property simdist is tested for): N replicas holding B/N examples each give,
concatenated in replica order, the output one replica gives for all B examples, and the
same moving statistics, up to rounding.

All arithmetic is float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["sync_batch_statistics", "sync_batch_norm"]


def sync_batch_statistics(replica_batches: Sequence[np.ndarray], axis: int = -1):
    """Global ``(mean, variance)`` per channel of the replicas' batches (see the docstring)."""
    batches = [np.asarray(b, dtype=np.float64) for b in replica_batches]
    rank = batches[0].ndim
    channel = axis % rank
    reduce_axes = tuple(a for a in range(rank) if a != channel)
    total = sum(b.sum(axis=reduce_axes) for b in batches)
    squares = sum((b * b).sum(axis=reduce_axes) for b in batches)
    count = sum(int(np.prod([b.shape[a] for a in reduce_axes])) for b in batches)
    mean = total / count
    return mean, squares / count - mean * mean


def sync_batch_norm(
    replica_batches: Sequence[np.ndarray],
    gamma: np.ndarray,
    beta: np.ndarray,
    moving_mean: np.ndarray,
    moving_variance: np.ndarray,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    axis: int = -1,
):
    """One training step: ``(outputs per replica, new moving_mean, new moving_variance)``."""
    mean, variance = sync_batch_statistics(replica_batches, axis)
    rank = np.asarray(replica_batches[0]).ndim
    shape = [1] * rank
    shape[axis % rank] = -1

    def along(v):
        return np.asarray(v, np.float64).reshape(shape)

    outputs = [
        (np.asarray(b, np.float64) - along(mean))
        / np.sqrt(along(variance) + epsilon)
        * along(gamma)
        + along(beta)
        for b in replica_batches
    ]
    decay = 1.0 - momentum
    new_mean = np.asarray(moving_mean, np.float64) * (1 - decay) + mean * decay
    new_variance = np.asarray(moving_variance, np.float64) * (1 - decay) + variance * decay
    return outputs, new_mean, new_variance
