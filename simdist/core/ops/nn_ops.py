"""Activations, softmax, bias_add, l2_loss, moments and dropout (``tf.nn``), with gradients.

Each op computes in NumPy in its input's dtype (float32 stays float32) and records one vjp
per input, following TF's gradient conventions at kinks: relu and relu6 pass no gradient at
0, leaky_relu passes ``alpha`` at 0, elu passes 1 at 0. Softmax-family ops subtract the
row maximum first, so logits of 1e4 stay finite.
"""

from __future__ import annotations

import numbers

import numpy as np

from simdist import errors
from simdist.core import random as sd_random
from simdist.core.ops._helpers import as_tensors
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "relu",
    "relu6",
    "leaky_relu",
    "elu",
    "selu",
    "sigmoid",
    "tanh",
    "softplus",
    "softsign",
    "silu",
    "swish",
    "softmax",
    "log_softmax",
    "bias_add",
    "l2_loss",
    "moments",
    "dropout",
]


def require_float(op: str, x: Tensor) -> None:
    """TF's float-only kernels reject integer inputs with InvalidArgumentError."""
    if not x.dtype.is_floating:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: "
            f"half, bfloat16, float, double (op {op}); tf.cast the input to a float dtype."
        )


def _unary(op: str, x, forward, backward, float_only: bool = True) -> Tensor:
    """A one-input op: ``y = forward(x)``, ``dx = backward(g, x, y)`` (a RaggedTensor maps
    over its ``flat_values``)."""
    if getattr(type(x), "_is_ragged", False):
        return x.with_flat_values(_unary(op, x.flat_values, forward, backward, float_only))
    (x,) = as_tensors(op, x)
    if float_only:
        require_float(op, x)
    xv = x._value
    yv = forward(xv)
    out = make_tensor(yv, x.dtype)
    record(op, [x], [out], [lambda g: backward(g, xv, yv)])
    return out


def relu(features, name=None) -> Tensor:
    """``max(features, 0)``; the gradient at 0 is 0."""
    return _unary("Relu", features, lambda x: np.maximum(x, 0), lambda g, x, y: g * (y > 0), False)


def relu6(features, name=None) -> Tensor:
    """``min(max(features, 0), 6)``; gradient 1 strictly inside (0, 6), else 0."""
    return _unary(
        "Relu6",
        features,
        lambda x: np.clip(x, 0, 6),
        lambda g, x, y: g * ((x > 0) & (x < 6)),
        False,
    )


def leaky_relu(features, alpha: float = 0.2, name=None) -> Tensor:
    """``features`` where positive, ``alpha * features`` elsewhere (gradient ``alpha`` at 0)."""
    (x,) = as_tensors("LeakyRelu", features)
    require_float("LeakyRelu", x)
    a = x._value.dtype.type(alpha)
    return _unary(
        "LeakyRelu",
        x,
        lambda v: np.where(v > 0, v, v * a),
        lambda g, v, y: np.where(v > 0, g, g * a),
    )


def elu(features, name=None) -> Tensor:
    """``features`` where positive, ``exp(features) - 1`` elsewhere."""
    return _unary(
        "Elu",
        features,
        lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
        lambda g, x, y: np.where(y < 0, g * (y + 1), g),
    )


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features, name=None) -> Tensor:
    """Scaled elu: ``scale * elu(features)`` with alpha ≈ 1.6733, scale ≈ 1.0507."""

    def forward(x):
        t = x.dtype.type
        neg = t(_SELU_SCALE * _SELU_ALPHA) * np.expm1(np.minimum(x, 0))
        return np.where(x > 0, t(_SELU_SCALE) * x, neg)

    def backward(g, x, y):
        t = x.dtype.type
        return np.where(x > 0, g * t(_SELU_SCALE), g * (y + t(_SELU_SCALE * _SELU_ALPHA)))

    return _unary("Selu", features, forward, backward)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))`` without overflow warnings for large |x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def sigmoid(x, name=None) -> Tensor:
    """``1 / (1 + exp(-x))``."""
    return _unary("Sigmoid", x, _sigmoid, lambda g, x, y: g * y * (1 - y))


def tanh(x, name=None) -> Tensor:
    """Hyperbolic tangent."""
    return _unary("Tanh", x, np.tanh, lambda g, x, y: g * (1 - y * y))


def softplus(features, name=None) -> Tensor:
    """``log(exp(features) + 1)``, computed without overflow."""
    return _unary(
        "Softplus",
        features,
        lambda x: np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))),
        lambda g, x, y: g * _sigmoid(x),
    )


def softsign(features, name=None) -> Tensor:
    """``features / (abs(features) + 1)``."""
    return _unary(
        "Softsign",
        features,
        lambda x: x / (np.abs(x) + 1),
        lambda g, x, y: g / np.square(np.abs(x) + 1),
    )


def silu(features, beta: float = 1.0, name=None) -> Tensor:
    """``features * sigmoid(beta * features)`` (swish)."""
    (x,) = as_tensors("Silu", features)
    require_float("Silu", x)
    b = x._value.dtype.type(beta)

    def backward(g, v, y):
        s = _sigmoid(b * v)
        return g * (s + b * v * s * (1 - s))

    return _unary("Silu", x, lambda v: v * _sigmoid(b * v), backward)


swish = silu  # TF's other name for it (tf.nn.swish)


def _check_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise errors.InvalidArgumentError(
            f"{op}: axis {axis} is out of range for a tensor of rank {ndim}; use an axis in "
            f"[{-ndim}, {ndim})."
        )
    return axis % ndim


def stable_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``x - logsumexp(x)`` along ``axis``, shifted by the max so nothing overflows."""
    # The ufuncs' reduce, which np.max / np.sum call for an array (without their wrappers).
    shifted = x - np.maximum.reduce(x, axis=axis, keepdims=True)
    return shifted - np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))


def stable_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax(logits, axis: int = -1, name=None) -> Tensor:
    """``exp(logits) / sum(exp(logits), axis)``, shifted by the max along ``axis``.

    Raises:
        InvalidArgumentError: integer logits, a scalar, or an axis out of range.
    """
    (x,) = as_tensors("Softmax", logits)
    require_float("Softmax", x)
    if x._value.ndim == 0:
        raise errors.InvalidArgumentError("Softmax: logits must have rank >= 1, got a scalar.")
    ax = _check_axis("Softmax", axis, x._value.ndim)
    y = stable_softmax(x._value, ax)
    out = make_tensor(y, x.dtype)
    record("Softmax", [x], [out], [lambda g: y * (g - np.sum(g * y, axis=ax, keepdims=True))])
    return out


def log_softmax(logits, axis: int = -1, name=None) -> Tensor:
    """``logits - log(sum(exp(logits), axis))``, finite for logits of any size.

    Raises:
        InvalidArgumentError: integer logits, a scalar, or an axis out of range.
    """
    (x,) = as_tensors("LogSoftmax", logits)
    require_float("LogSoftmax", x)
    if x._value.ndim == 0:
        raise errors.InvalidArgumentError("LogSoftmax: logits must have rank >= 1.")
    ax = _check_axis("LogSoftmax", axis, x._value.ndim)
    y = stable_log_softmax(x._value, ax)
    out = make_tensor(y, x.dtype)
    record(
        "LogSoftmax",
        [x],
        [out],
        [lambda g: g - np.exp(y) * np.sum(g, axis=ax, keepdims=True)],
    )
    return out


def _shape_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def bias_add(value, bias, data_format: str | None = None, name=None) -> Tensor:
    """Add the 1-D ``bias`` along the channel axis of ``value`` (last for NHWC, 1 for NCHW).

    Raises:
        InvalidArgumentError: ``value`` below rank 2, ``bias`` not 1-D, a size mismatch, or
            different dtypes.
        ValueError: an unknown ``data_format``.
    """
    x, b = as_tensors("BiasAdd", value, bias)
    xv, bv = x._value, b._value
    fmt = data_format or "NHWC"
    if fmt not in ("NHWC", "NCHW", "NWC", "NCW", "NDHWC", "NCDHW"):
        raise ValueError(f"data_format must be NHWC-like or NCHW-like, got {fmt!r}.")
    if xv.ndim < 2:
        raise errors.InvalidArgumentError(
            f"Input tensor must be at least 2D: {_shape_text(xv.shape)}"
        )
    if bv.ndim != 1:
        raise errors.InvalidArgumentError(f"Biases must be 1D: {_shape_text(bv.shape)}")
    channel_axis = 1 if fmt.startswith("NC") else xv.ndim - 1
    if bv.shape[0] != xv.shape[channel_axis]:
        which = "channel" if fmt.startswith("NC") else "last"
        raise errors.InvalidArgumentError(
            f"Must provide as many biases as the {which} dimension of the input tensor: "
            f"{_shape_text(bv.shape)} vs. {_shape_text(xv.shape)}"
        )
    bshape = [1] * xv.ndim
    bshape[channel_axis] = bv.shape[0]
    out = make_tensor(xv + bv.reshape(bshape), x.dtype)
    sum_axes = tuple(i for i in range(xv.ndim) if i != channel_axis)

    def grad_bias(g: np.ndarray) -> np.ndarray:
        if channel_axis == g.ndim - 1 and g.dtype.kind == "f" and g.flags.c_contiguous:
            # Channels last: one matrix-vector product (BLAS) sums the rows, ~6x faster
            # than NumPy's reduction over the leading axes.
            rows = g.reshape(-1, g.shape[-1])
            return np.matmul(np.ones(rows.shape[0], g.dtype), rows)
        return np.sum(g, axis=sum_axes)

    record("BiasAdd", [x, b], [out], [lambda g: g, grad_bias])
    return out


def l2_loss(t, name=None) -> Tensor:
    """``sum(t ** 2) / 2``, a scalar of ``t``'s dtype."""
    (x,) = as_tensors("L2Loss", t)
    require_float("L2Loss", x)
    xv = x._value
    out = make_tensor(np.asarray(np.sum(xv * xv) / 2, dtype=xv.dtype), x.dtype)
    record("L2Loss", [x], [out], [lambda g: g * xv])
    return out


def moments(x, axes, shift=None, keepdims: bool = False, name=None) -> tuple[Tensor, Tensor]:
    """Mean and (biased) variance of ``x`` over ``axes`` (``tf.nn.moments``).

    Returns:
        ``(mean, variance)``.
    """
    (t,) = as_tensors("Moments", x)
    require_float("Moments", t)
    xv = t._value
    ax = tuple(sorted({_check_axis("Moments", int(a), xv.ndim) for a in np.atleast_1d(axes)}))
    count = xv.dtype.type(np.prod([xv.shape[a] for a in ax]) if ax else 1)
    mean_k = np.mean(xv, axis=ax, keepdims=True)
    centred = xv - mean_k
    var_k = np.mean(centred * centred, axis=ax, keepdims=True)
    mean_v, var_v = (mean_k, var_k) if keepdims else (np.squeeze(mean_k, ax), np.squeeze(var_k, ax))
    mean, variance = make_tensor(mean_v, t.dtype), make_tensor(var_v, t.dtype)

    def grad(dmean, dvar):
        dm = dmean if keepdims else np.expand_dims(dmean, ax)
        dv = dvar if keepdims else np.expand_dims(dvar, ax)
        return (dm + 2 * dv * centred) / count

    record("Moments", [t], [mean, variance], [grad])
    return mean, variance


def _rate_value(rate) -> float:
    r = rate.numpy() if isinstance(rate, Tensor) else rate
    if isinstance(r, np.ndarray) and r.ndim == 0:
        r = r[()]
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Real) or not 0 <= r < 1:
        raise ValueError(
            f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={r}"
        )
    return float(r)


def dropout(x, rate, noise_shape=None, seed=None, name=None) -> Tensor:
    """Zero each element with probability ``rate``, scale the kept ones by ``1 / (1 - rate)``.

    The mask comes from ``simdist.core.random.draw(seed)`` (TF's seed rules). ``rate == 0``
    returns ``x`` itself and draws nothing.

    Args:
        x: a float tensor.
        rate: drop probability in [0, 1).
        noise_shape: a shape broadcastable to ``x``'s (``None`` entries take ``x``'s size),
            to drop whole slices together.
        seed: the op seed.

    Raises:
        ValueError: ``rate`` outside [0, 1), or a non-float ``x``.
        InvalidArgumentError: a ``noise_shape`` that does not broadcast to ``x``'s shape.
    """
    (t,) = as_tensors("Dropout", x)
    if not t.dtype.is_floating:
        raise ValueError(
            "`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
            f"x_dtype={t.dtype.name}"
        )
    r = _rate_value(rate)
    if r == 0:
        return t
    xv = t._value
    shape = _noise_shape(noise_shape, xv.shape)
    keep = sd_random.draw(seed).random(shape, dtype=np.float32) >= np.float32(r)
    scaled_mask = keep.astype(xv.dtype) * xv.dtype.type(1.0 / (1.0 - r))
    out = make_tensor(xv * scaled_mask, t.dtype)
    record("Dropout", [t], [out], [lambda g: g * scaled_mask])
    return out


def _noise_shape(noise_shape, x_shape: tuple[int, ...]) -> tuple[int, ...]:
    if noise_shape is None:
        return x_shape
    raw = noise_shape.numpy() if isinstance(noise_shape, Tensor) else noise_shape
    dims = [None if d is None else int(d) for d in raw]
    lead = len(x_shape) - len(dims)
    shape = tuple(
        x_shape[lead + i] if d is None and lead + i >= 0 else d for i, d in enumerate(dims)
    )
    try:
        fits = np.broadcast_shapes(shape, x_shape) == tuple(x_shape)
    except (ValueError, TypeError):
        fits = False
    if not fits:
        raise errors.InvalidArgumentError(
            f"noise_shape {list(shape)} must be broadcastable to x's shape {list(x_shape)}: "
            "each entry equal to x's or 1."
        )
    return shape
