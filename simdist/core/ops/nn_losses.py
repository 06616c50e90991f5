"""Cross-entropies and loss scaling for replicas (``tf.nn``), with their gradients.

The cross-entropies use the stable forms (log-softmax shifted by the row maximum;
``max(x, 0) - x z + log1p(exp(-|x|))`` for the sigmoid), so logits of 1e4 give finite
losses and gradients. ``compute_average_loss`` and ``scale_regularization_loss`` divide by
the *global* batch and by the number of replicas in sync, as TF's do.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes, step_hooks
from simdist.core.context import num_replicas_in_sync, state
from simdist.core.convert import convert_to_tensor
from simdist.core.ops._helpers import as_tensors, unbroadcast
from simdist.core.ops.nn_ops import require_float, stable_log_softmax
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "sparse_softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits",
    "sigmoid_cross_entropy_with_logits",
    "compute_average_loss",
    "scale_regularization_loss",
]

_SHOWN_LABELS = 20  # label values listed in an out-of-range error


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None) -> Tensor:
    """``-log softmax(logits)[label]`` per example; labels are class indices.

    Args:
        labels: int32/int64 indices of shape ``logits.shape[:-1]``, each in [0, classes).
        logits: float logits ``[..., classes]``.

    Returns:
        The per-example losses, of ``labels``' shape and ``logits``' dtype. Labels get no
        gradient.

    Raises:
        ValueError: a rank or shape mismatch between labels and logits.
        InvalidArgumentError: float labels, integer logits, or a label out of range.
    """
    (x,) = as_tensors("SparseSoftmaxCrossEntropyWithLogits", logits)
    y = convert_to_tensor(labels)
    require_float("SparseSoftmaxCrossEntropyWithLogits", x)
    if y.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.InvalidArgumentError(
            f"Value for attr 'Tlabels' of {y.dtype.name} is not in the list of allowed "
            "values: int32, int64; labels are class indices (use "
            "softmax_cross_entropy_with_logits for probabilities)."
        )
    xv, yv = x._value, y._value
    if xv.ndim == 0:
        raise ValueError("Logits cannot be scalars; expected shape [..., num_classes].")
    if yv.ndim != xv.ndim - 1:
        raise ValueError(
            "`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: "
            f"labels.shape={yv.shape} of rank {yv.ndim} and logits.shape={xv.shape} of "
            f"rank {xv.ndim}"
        )
    if yv.shape != xv.shape[:-1]:
        raise ValueError(
            "`labels.shape` must equal `logits.shape` except for the last dimension. "
            f"Received: labels.shape={yv.shape} and logits.shape={xv.shape}"
        )
    classes = xv.shape[-1]
    bad = np.flatnonzero((yv < 0) | (yv >= classes))
    if bad.size:
        shown = " ".join(str(v) for v in yv.reshape(-1)[:_SHOWN_LABELS])
        more = " ..." if yv.size > _SHOWN_LABELS else ""
        raise errors.InvalidArgumentError(
            f"Received a label value of {yv.reshape(-1)[bad[0]]} which is outside the valid "
            f"range of [0, {classes}).  Label values: {shown}{more}"
        )
    # Each example's label picked by plain indexing of the [examples, classes] view (what
    # take_along_axis / put_along_axis do, without their index building).
    rows = np.arange(yv.size)
    index = yv.reshape(-1).astype(np.intp)
    logp = stable_log_softmax(xv, -1)
    picked = logp.reshape(-1, classes)[rows, index].reshape(yv.shape)
    out = make_tensor(-picked, x.dtype)

    def grad_logits(g):
        backprop = np.exp(logp)
        flat = backprop.reshape(-1, classes)  # a view: exp's result is contiguous
        flat[rows, index] = flat[rows, index] - 1
        return g[..., None] * backprop

    record("SparseSoftmaxCrossEntropyWithLogits", [x, y], [out], [grad_logits, None])
    return out


def softmax_cross_entropy_with_logits(labels, logits, axis: int = -1, name=None) -> Tensor:
    """``-sum(labels * log_softmax(logits), axis)``; labels are probability distributions.

    Labels are cast to ``logits``' dtype (as TF does) and get a gradient too.

    Raises:
        InvalidArgumentError: integer logits, or shapes that do not broadcast.
    """
    (x,) = as_tensors("SoftmaxCrossEntropyWithLogits", logits)
    require_float("SoftmaxCrossEntropyWithLogits", x)
    y = convert_to_tensor(labels)
    xv, yv = x._value, y._value.astype(x._value.dtype, copy=False)
    try:
        full = np.broadcast_shapes(xv.shape, yv.shape)
    except ValueError:
        full = None
    if full is None or xv.ndim == 0:
        raise errors.InvalidArgumentError(
            "logits and labels must be broadcastable: logits_size="
            f"{list(xv.shape)} labels_size={list(yv.shape)}"
        )
    ndim = len(full)
    if not -ndim <= axis < ndim:
        raise errors.InvalidArgumentError(
            f"axis {axis} is out of range for logits of rank {ndim}; use an axis in "
            f"[{-ndim}, {ndim})."
        )
    ax = axis % ndim
    logp = stable_log_softmax(np.broadcast_to(xv, full), ax)
    out = make_tensor(-np.sum(yv * logp, axis=ax), x.dtype)

    def grad_logits(g):
        ge = np.expand_dims(g, ax)
        total = np.sum(np.broadcast_to(yv, full), axis=ax, keepdims=True)
        return unbroadcast(ge * (np.exp(logp) * total - yv), xv.shape)

    def grad_labels(g):
        dy = unbroadcast(-np.expand_dims(g, ax) * logp, yv.shape)
        return dy.astype(y._value.dtype, copy=False)

    record("SoftmaxCrossEntropyWithLogits", [x, y], [out], [grad_logits, grad_labels])
    return out


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None) -> Tensor:
    """Element-wise ``-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))``, stable.

    Args:
        labels: ``z``, same shape and dtype as ``logits``.
        logits: ``x``.

    Raises:
        ValueError: different shapes, or a missing argument.
        InvalidArgumentError: different dtypes.
    """
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits needs both labels= and logits=.")
    x, z = as_tensors("SigmoidCrossEntropyWithLogits", logits, labels)
    require_float("SigmoidCrossEntropyWithLogits", x)
    xv, zv = x._value, z._value
    if xv.shape != zv.shape:
        raise ValueError(
            f"`logits` and `labels` must have the same shape, received ({xv.shape} vs {zv.shape})."
        )
    loss = np.maximum(xv, 0) - xv * zv + np.log1p(np.exp(-np.abs(xv)))
    out = make_tensor(loss, x.dtype)

    def grad_logits(g):
        e = np.exp(-np.abs(xv))
        sig = np.where(xv >= 0, 1 / (1 + e), e / (1 + e))
        return g * (sig - zv)

    record("SigmoidCrossEntropyWithLogits", [x, z], [out], [grad_logits, lambda g: -g * xv])
    return out


def _refuse_cross_replica(fn: str) -> None:
    if state.strategy_stack and state.replica_context is None:
        raise RuntimeError(
            f"You are calling `{fn}` in cross replica context, while it was expected to be "
            "called in replica context: call it inside the function given to strategy.run."
        )


def _global_batch_size(value) -> int:
    """Validate ``global_batch_size`` as TF does: a non-negative integer scalar."""
    raw = value.numpy() if isinstance(value, Tensor) else value
    arr = np.asarray(raw)
    if arr.ndim != 0:
        raise ValueError(
            f"global_batch_size must be scalar. Expected scalar shape, saw shape: {arr.shape}."
        )
    if arr.dtype.kind not in "iu":
        raise TypeError(
            "global_batch_size must be an integer. Found: a value of dtype "
            f"{arr.dtype} ({raw!r}); pass the number of examples in the global batch."
        )
    if arr < 0:
        raise errors.InvalidArgumentError(
            f"global_batch_size must be non-negative, got {int(arr)}."
        )
    return int(arr)


def _align_weights(wv: np.ndarray, loss_ndim: int) -> np.ndarray:
    """TF's squeeze-or-expand: make ``sample_weight`` line up with the loss's axes."""
    if wv.ndim == 0:
        return wv
    if wv.ndim - loss_ndim == 1 and wv.shape[-1] == 1:
        return wv[..., 0]
    if loss_ndim - wv.ndim == 1:
        return wv[..., None]
    return wv


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None) -> Tensor:
    """Sum of (weighted) per-example losses divided by the global batch size.

    With ``global_batch_size=None`` the global batch is this replica's batch (the first
    dimension of ``per_example_loss``) times ``num_replicas_in_sync``. A global batch of 0
    gives 0. Weighting is done in the loss's dtype (TF rounds it through float32).

    >>> import simdist as tf
    >>> float(tf.nn.compute_average_loss([2.0, 3.0], global_batch_size=4))
    1.25

    Args:
        per_example_loss: losses of rank >= 1, the first axis the batch.
        sample_weight: optional weights, broadcast against the losses (a weight per example
            lines up with the first axis).
        global_batch_size: the number of examples across all replicas.

    Returns:
        A scalar of the loss's dtype (float64 for integer losses).

    Raises:
        ValueError: a scalar loss, or a non-scalar ``global_batch_size``.
        TypeError: a non-integer ``global_batch_size``.
        InvalidArgumentError: a negative ``global_batch_size``, or weights that do not
            broadcast against the losses.
        RuntimeError: ``global_batch_size=None`` in a strategy's cross-replica context.
    """
    loss = convert_to_tensor(per_example_loss)
    lv = loss._value
    if lv.ndim == 0:
        raise ValueError(
            "Invalid value passed for `per_example_loss`. Expected a tensor with at least "
            f"rank 1. Received per_example_loss={loss} with rank 0"
        )
    work = lv.dtype if loss.dtype.is_floating else np.dtype(np.float64)
    out_dtype = dtypes.as_dtype(work)
    lw = lv.astype(work, copy=False)
    inputs, weighted = [loss], lw
    weight_t = None
    if sample_weight is not None:
        weight_t = convert_to_tensor(sample_weight)
        wv = _align_weights(weight_t._value.astype(work, copy=False), lv.ndim)
        try:
            np.broadcast_shapes(lv.shape, wv.shape)
        except ValueError:
            raise errors.InvalidArgumentError(
                f"sample_weight of shape {list(weight_t.shape)} does not broadcast against "
                f"per_example_loss of shape {list(lv.shape)}; give one weight per example."
            ) from None
        weighted = lw * wv
        inputs.append(weight_t)
    if global_batch_size is None:
        _refuse_cross_replica("compute_average_loss")
        gbs = lv.shape[0] * num_replicas_in_sync()
    else:
        gbs = _global_batch_size(global_batch_size)
    if step_hooks.listener() is not None:
        step_hooks.note("compute_average_loss", given=global_batch_size is not None, divisor=gbs)
    scale = work.type(0 if gbs == 0 else 1 / gbs)  # div_no_nan: 0 for an empty global batch
    out = make_tensor(np.asarray(np.sum(weighted) * scale, dtype=work), out_dtype)

    def grad_loss(g):
        per = g * scale if weight_t is None else g * scale * wv
        return unbroadcast(np.broadcast_to(per, weighted.shape), lv.shape)

    def grad_weight(g):
        dw = unbroadcast(np.broadcast_to(g * scale * lw, weighted.shape), wv.shape)
        return dw.reshape(weight_t._value.shape).astype(weight_t._value.dtype, copy=False)

    record("ComputeAverageLoss", inputs, [out], [grad_loss, grad_weight][: len(inputs)])
    return out


def scale_regularization_loss(regularization_loss) -> Tensor:
    """The sum of ``regularization_loss`` divided by the number of replicas in sync.

    Raises:
        RuntimeError: called in a strategy's cross-replica context.
    """
    _refuse_cross_replica("scale_regularization_loss")
    step_hooks.note("scale_regularization_loss")
    x = convert_to_tensor(regularization_loss)
    xv = x._value
    work = xv.dtype if x.dtype.is_floating else np.dtype(np.float64)
    n = num_replicas_in_sync()
    out = make_tensor(np.asarray(np.sum(xv, dtype=work) / work.type(n), dtype=work))
    record("ScaleRegularizationLoss", [x], [out], [lambda g: np.broadcast_to(g / n, xv.shape)])
    return out
