"""One synchronous data-parallel SGD step, single-device and replicated, plus its pitfalls.

A model is a pure function `grad_fn(params, x, y) -> (per_example_loss, grads_of_sum)`:
`params` is a list of float64 arrays, `per_example_loss` has shape (batch,), and
`grads_of_sum` is the gradient of sum(per_example_loss) with respect to each parameter.
Two such models are written out here in NumPy (`linear_regression`, `softmax_regression`).

The rule stated (the custom-training tutorial's "Define the loss function" section, and
MirroredStrategy's gradient all-reduce): each replica divides its summed loss by the
GLOBAL batch size, and the replicas' gradients are SUM-reduced; then every replica applies
the same update, and the step equals the single-device step on the concatenated batch.
The only difference is float64 reassociation (per-replica partial sums added in replica
order instead of one sum): relative error about (batch size) x 2**-53 per entry for
well-scaled data; tests hold the two to rtol=1e-10, atol=1e-12.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from simdist_reference.reduce import reduce

GradFn = Callable[[list[np.ndarray], np.ndarray, np.ndarray], tuple[np.ndarray, list[np.ndarray]]]


@dataclass(frozen=True)
class StepResult:
    """What a training step produced.

    Attributes:
      params: the parameters after the update (identical on every replica).
      loss: the step's loss as the user would report it (for the replicated step, the SUM
        across replicas of the scaled per-replica losses).
      grads: the gradients applied.
      per_replica_losses: each replica's scaled loss (empty for the single-device step).
    """

    params: list[np.ndarray]
    loss: np.float64
    grads: list[np.ndarray]
    per_replica_losses: tuple[np.float64, ...] = ()


def linear_regression(
    params: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Linear model x @ w + b with per-example loss 0.5 * ||x @ w + b - y||^2.

    Args:
      params: [w of shape (d, k), b of shape (k,)].
      x: inputs, shape (batch, d).
      y: targets, shape (batch, k).

    Returns:
      (per-example loss of shape (batch,), [d sum/dw, d sum/db]).
    """
    w, b = (np.asarray(p, dtype=np.float64) for p in params)
    x = np.asarray(x, dtype=np.float64).reshape(-1, w.shape[0])
    y = np.asarray(y, dtype=np.float64).reshape(-1, w.shape[1])
    residual = x @ w + b - y
    per_example = 0.5 * np.sum(residual * residual, axis=1)
    return per_example, [x.T @ residual, residual.sum(axis=0)]


def softmax_regression(
    params: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Softmax classifier with sparse categorical cross-entropy on the logits x @ w + b.

    Args:
      params: [w of shape (d, classes), b of shape (classes,)].
      x: inputs, shape (batch, d).
      y: integer labels, shape (batch,).

    Returns:
      (per-example loss of shape (batch,), [d sum/dw, d sum/db]).
    """
    w, b = (np.asarray(p, dtype=np.float64) for p in params)
    x = np.asarray(x, dtype=np.float64).reshape(-1, w.shape[0])
    labels = np.asarray(y).reshape(-1).astype(np.int64)
    logits = x @ w + b
    shifted = logits - (logits.max(axis=1, keepdims=True) if len(logits) else 0.0)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1))
    rows = np.arange(len(labels))
    per_example = log_norm - shifted[rows, labels]
    probs = np.exp(shifted - log_norm[:, np.newaxis])
    probs[rows, labels] -= 1.0
    return per_example, [x.T @ probs, probs.sum(axis=0)]


def sgd_update(
    params: Sequence[np.ndarray], grads: Sequence[np.ndarray], lr: float
) -> list[np.ndarray]:
    """Plain SGD: p - lr * g for each parameter, in float64."""
    return [
        np.asarray(p, dtype=np.float64) - np.float64(lr) * g
        for p, g in zip(params, grads, strict=True)
    ]


def train_step_single(
    params: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray, grad_fn: GradFn, lr: float
) -> StepResult:
    """One SGD step on one device: loss and gradients averaged over the batch.

    Args:
      params: the parameters.
      x, y: the whole batch.
      grad_fn: the model (see the module docstring).
      lr: the learning rate.

    Returns:
      The StepResult; `loss` is the batch mean of the per-example losses.
    """
    per_example, grad_sums = grad_fn(list(params), x, y)
    count = np.float64(len(per_example))
    grads = [g / count for g in grad_sums]
    loss = np.float64(np.sum(per_example)) / count
    return StepResult(sgd_update(params, grads, lr), loss, grads)


def replica_losses_and_grads(
    params: Sequence[np.ndarray],
    per_replica_x: Sequence[np.ndarray],
    per_replica_y: Sequence[np.ndarray],
    grad_fn: GradFn,
    scale: str,
    global_batch_size: int | None = None,
) -> tuple[list[np.float64], list[list[np.ndarray]]]:
    """Each replica's scaled loss and gradients, before any cross-replica reduction.

    Args:
      params: the (mirrored) parameters.
      per_replica_x, per_replica_y: each replica's batch, replica order.
      grad_fn: the model.
      scale: "global" divides by `global_batch_size` (compute_average_loss, correct);
        "local_mean" divides by the replica's own batch size (tf.reduce_mean, the
        pitfall). An empty local batch under "local_mean" gives NaN, as 0/0 does in TF.
      global_batch_size: the divisor for "global"; None means the total example count.

    Returns:
      (losses, grads): one scaled loss and one gradient list per replica.

    Raises:
      ValueError: unknown `scale` or replica counts that disagree.
    """
    if len(per_replica_x) != len(per_replica_y):
        raise ValueError("per_replica_x and per_replica_y must have one batch per replica")
    if scale not in ("global", "local_mean"):
        raise ValueError(f"scale must be 'global' or 'local_mean', got {scale!r}")
    results = [
        grad_fn(list(params), x, y) for x, y in zip(per_replica_x, per_replica_y, strict=True)
    ]
    if global_batch_size is None:
        global_batch_size = sum(len(per_example) for per_example, _ in results)
    losses, grads = [], []
    for per_example, grad_sums in results:
        divisor = np.float64(global_batch_size if scale == "global" else len(per_example))
        with np.errstate(invalid="ignore", divide="ignore"):
            losses.append(np.float64(np.sum(per_example)) / divisor)
            grads.append([g / divisor for g in grad_sums])
    return losses, grads


def _replicated_step(
    params: Sequence[np.ndarray],
    per_replica_x: Sequence[np.ndarray],
    per_replica_y: Sequence[np.ndarray],
    grad_fn: GradFn,
    lr: float,
    scale: str,
    reduce_op: str,
    global_batch_size: int | None,
) -> StepResult:
    losses, grads = replica_losses_and_grads(
        params, per_replica_x, per_replica_y, grad_fn, scale, global_batch_size
    )
    reduced = [reduce(reduce_op, [g[i] for g in grads], axis=None) for i in range(len(params))]
    loss = reduce(reduce_op, losses, axis=None)
    return StepResult(sgd_update(params, reduced, lr), np.float64(loss), reduced, tuple(losses))


def train_step_replicated(
    params: Sequence[np.ndarray],
    per_replica_x: Sequence[np.ndarray],
    per_replica_y: Sequence[np.ndarray],
    grad_fn: GradFn,
    lr: float,
    global_batch_size: int | None = None,
) -> StepResult:
    """The correct synchronous data-parallel step (MirroredStrategy + compute_average_loss).

    Each replica scales its summed loss by 1 / global_batch_size; the gradients are
    SUM-all-reduced in replica order; every replica applies the same SGD update. The loss
    reported is the SUM across replicas of the scaled losses. With global_batch_size equal
    to the number of examples in the step, this equals `train_step_single` on the
    concatenated batch (up to float64 reassociation, see the module docstring), for any
    split of the batch among replicas, empty replicas included.

    Args:
      params: the parameters.
      per_replica_x, per_replica_y: each replica's batch, replica order.
      grad_fn: the model.
      lr: the learning rate.
      global_batch_size: the divisor; None means the step's total example count.

    Returns:
      The StepResult.
    """
    return _replicated_step(
        params, per_replica_x, per_replica_y, grad_fn, lr, "global", "SUM", global_batch_size
    )


def train_step_replicated_local_mean_sum(
    params: Sequence[np.ndarray],
    per_replica_x: Sequence[np.ndarray],
    per_replica_y: Sequence[np.ndarray],
    grad_fn: GradFn,
    lr: float,
) -> StepResult:
    """PITFALL: tf.reduce_mean on each replica, then gradients SUM-reduced.

    With N equal per-replica batches, the gradient (and reported loss) is N times the
    single-device one: each replica already averaged, and the SUM adds N averages. This is
    the mistake the N-versus-1 oracle detects as "a factor of N".
    """
    return _replicated_step(
        params, per_replica_x, per_replica_y, grad_fn, lr, "local_mean", "SUM", None
    )


def train_step_replicated_local_mean_mean(
    params: Sequence[np.ndarray],
    per_replica_x: Sequence[np.ndarray],
    per_replica_y: Sequence[np.ndarray],
    grad_fn: GradFn,
    lr: float,
) -> StepResult:
    """PITFALL: tf.reduce_mean on each replica, then gradients MEAN-reduced.

    Correct when every replica holds the same number of examples, wrong on uneven (last
    partial) batches: an example on a replica with b examples weighs 1/(N*b) instead of
    1/B (the API page's "some values 1/8 and others 1/4"); an empty replica makes it NaN.
    """
    return _replicated_step(
        params, per_replica_x, per_replica_y, grad_fn, lr, "local_mean", "MEAN", None
    )
