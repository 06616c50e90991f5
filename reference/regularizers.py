"""Weight penalties and how a replicated step counts them.

Sources read: tf_keras's ``regularizers.py`` (L1, L2, L1L2) and
``tf.nn.scale_regularization_loss`` (tensorflow/python/ops/nn_impl_distribute.py).

The rules stated:

* ``L1L2(l1, l2)(w) = l1 * sum|w| + l2 * sum w^2``; a model's regularization loss is the sum
  of its weights' penalties;
* in a step replicated over ``n`` replicas, each replica adds ``penalty / n`` to its loss
  (``scale_regularization_loss``), so that the SUM of the replicas' losses (and gradients)
  counts the penalty exactly once, as the single-device step does.

Float64 arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def l1_l2_penalty(weights: Sequence[np.ndarray], l1: float = 0.0, l2: float = 0.0) -> float:
    """The sum over ``weights`` of ``l1 * sum|w| + l2 * sum w^2``."""
    total = 0.0
    for w in weights:
        w = np.asarray(w, dtype=np.float64)
        total += l1 * float(np.sum(np.abs(w))) + l2 * float(np.sum(w * w))
    return total


def replicated_penalty_total(penalty: float, num_replicas: int) -> float:
    """What the replicas' scaled penalties add up to: ``n * (penalty / n)`` (= ``penalty``).

    Raises:
      ValueError: ``num_replicas < 1``.
    """
    if num_replicas < 1:
        raise ValueError(f"num_replicas must be at least 1, got {num_replicas}")
    share = penalty / num_replicas
    return float(sum(share for _ in range(num_replicas)))
