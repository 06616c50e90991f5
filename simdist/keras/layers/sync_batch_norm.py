"""``tf.keras.layers.experimental.SyncBatchNormalization``: batch statistics over ALL replicas.

In a replica context with more than one replica in sync, each replica sums its inputs and
their squares over the reduction axes and counts its examples; one SUM all-reduce of the
three gives every replica the global batch's

    mean = sum(x) / (global_batch * other_reduced_sizes)
    variance = sum(x**2) / (global_batch * other_reduced_sizes) - mean**2

(Keras 2's formula), which every replica then uses to normalize and to update its moving
statistics, so the moving statistics stay identical on all replicas. Gradients flow back
through the all-reduce. With one replica (or outside ``strategy.run``) it is exactly
``BatchNormalization``. The rule, stated plainly in NumPy, is
``reference/batch_norm.py``; N replicas x B/N equals 1 replica x B (up to rounding).
"""

from __future__ import annotations

import math

import numpy as np

from simdist.core.ops import elementwise_ops, math_ops, reduction_ops
from simdist.distribute.distribute_lib import get_replica_context
from simdist.keras.layers.normalization import BatchNormalization

__all__ = ["SyncBatchNormalization"]


class SyncBatchNormalization(BatchNormalization):
    """``BatchNormalization`` whose training statistics are all-reduced across replicas."""

    _SYNCHRONIZED = True

    def _batch_moments(self, inputs, mask=None):
        if mask is not None:
            raise NotImplementedError(
                "simdist's SyncBatchNormalization does not yet take a mask in training; use "
                "BatchNormalization(fused=False), or drop the mask before this layer."
            )
        context = get_replica_context()
        if context is None or context.num_replicas_in_sync == 1:
            return super()._batch_moments(inputs)
        axes = self._reduction_axes
        dims = tuple(inputs.shape.as_list())
        local_sum = reduction_ops.reduce_sum(inputs, axis=axes)
        local_squares = reduction_ops.reduce_sum(elementwise_ops.square(inputs), axis=axes)
        local_batch = np.asarray(float(dims[axes[0]]), dtype=inputs.dtype.as_numpy_dtype)
        total, squares, batch = context.all_reduce("SUM", [local_sum, local_squares, local_batch])
        others = math.prod(dims[a] for a in axes[1:])
        count = math_ops.multiply(batch, float(others))
        mean = math_ops.divide(total, count)
        mean_of_squares = math_ops.divide(squares, count)
        variance = math_ops.subtract(mean_of_squares, elementwise_ops.square(mean))
        return mean, variance
