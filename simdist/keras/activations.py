"""``tf.keras.activations``: element-wise activation functions and ``get`` by name.

Each function calls simdist's ops, so gradients flow through the tape.
"""

from __future__ import annotations

from collections.abc import Callable

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import comparison_ops, math_ops, nn_ops
from simdist.core.tensor import Tensor

__all__ = [
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
    "linear",
    "get",
    "serialize",
    "deserialize",
]


def relu(x, alpha: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Tensor:
    """``max(x, 0)``; with ``alpha`` a leaky slope below ``threshold``, with ``max_value`` a cap.

    The ops are Keras 2's, so the gradients at the kinks are TF's: ``leaky_relu`` for a slope
    alone, ``relu6`` for ``max_value=6`` without a threshold (gradient 0 at 0 and at 6), else
    ``relu`` then ``clip_by_value(0, max_value)`` (gradient 1 at the cap).

    Args:
        x: input tensor.
        alpha: slope for values below ``threshold``.
        max_value: upper bound of the output, or ``None``.
        threshold: values below it are zeroed (or scaled by ``alpha``).
    """
    x = convert_to_tensor(x)
    if alpha == 0.0 and max_value is None and threshold == 0.0:
        return nn_ops.relu(x)
    below = None
    if alpha != 0.0:
        if max_value is None and threshold == 0.0:
            return nn_ops.leaky_relu(x, alpha=alpha)
        below = nn_ops.relu(math_ops.subtract(threshold, x))
    clip = max_value is not None
    if threshold != 0.0:
        out = math_ops.multiply(x, math_ops.cast(comparison_ops.greater(x, threshold), x.dtype))
    elif max_value == 6:
        out, clip = nn_ops.relu6(x), False
    else:
        out = nn_ops.relu(x)
    if clip:
        out = math_ops.clip_by_value(out, 0.0, max_value)
    if below is not None:
        out = math_ops.subtract(out, math_ops.multiply(below, alpha))
    return out


def sigmoid(x) -> Tensor:
    """``1 / (1 + exp(-x))``."""
    return nn_ops.sigmoid(x)


def tanh(x) -> Tensor:
    """Hyperbolic tangent."""
    return nn_ops.tanh(x)


def softmax(x, axis: int = -1) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``axis``.

    Raises:
        ValueError: a rank-1 or scalar input (Keras refuses them: one value per class axis
            would always give 1).
    """
    x = convert_to_tensor(x)
    if x.shape.rank is not None and x.shape.rank <= 1:
        raise ValueError(
            f"Cannot apply softmax to a tensor that is 1D. Received input: {x!r}; add a batch "
            "axis first."
        )
    return nn_ops.softmax(x, axis=axis)


def linear(x) -> Tensor:
    """The identity: what ``activation=None`` means."""
    return x


_BY_NAME: dict[str, Callable] = {
    "relu": relu,
    "sigmoid": sigmoid,
    "softmax": softmax,
    "tanh": tanh,
    "linear": linear,
}


def serialize(activation: Callable) -> str:
    """The name that :func:`get` maps back to ``activation``.

    Raises:
        ValueError: ``activation`` is not one of this module's functions.
    """
    for name, fn in _BY_NAME.items():
        if fn is activation:
            return name
    raise ValueError(f"Unknown activation function: {activation!r}.")


def deserialize(name: str) -> Callable:
    return get(name)


def get(identifier) -> Callable:
    """The activation named ``identifier`` (``None`` is ``linear``); callables pass through.

    Raises:
        ValueError: an unknown name, or something that is neither a name nor a callable.
    """
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(
                f"Unknown activation function: {identifier!r}; use one of {sorted(_BY_NAME)} "
                "or pass a callable."
            )
        return fn
    if callable(identifier):
        return identifier
    raise ValueError(
        f"Could not interpret activation function identifier: {identifier!r}; pass a name "
        "or a callable."
    )
