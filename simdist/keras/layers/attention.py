"""``Attention`` (Luong, dot-product) and ``AdditiveAttention`` (Bahdanau), as Keras 2.

Both take ``[query, value]`` or ``[query, value, key]`` (``key`` defaults to ``value``):
``query`` ``[batch, Tq, dim]``, ``value``/``key`` ``[batch, Tv, dim]``. Scores ``[batch, Tq,
Tv]`` are, for ``Attention``, ``query @ key^T`` (times ``scale`` with ``use_scale``), or with
``score_mode='concat'`` ``concat_score_weight * sum(tanh(scale * (q + k)))``; for
``AdditiveAttention``, ``sum(scale * tanh(q + k))`` (``scale`` a ``[dim]`` weight with
``use_scale``). Then, as Keras's ``BaseDenseAttention``:

* where the value mask (``mask=[query_mask, value_mask]``, or the Keras masks of the inputs)
  is False, or above the diagonal with ``use_causal_mask=True``, ``1e9`` is subtracted from
  the score;
* ``softmax`` over ``Tv``, then dropout of the weights when ``training`` (the returned
  attention scores are the weights after dropout, as Keras returns them);
* ``weights @ value``, multiplied by the query mask; the output's mask is the query mask.
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, math_ops, nn_ops, reduction_ops
from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer

__all__ = ["Attention", "AdditiveAttention", "masked_scores", "causal_mask"]

_MASKED_SCORE = 1e9  # Keras subtracts this from masked scores (65504 for float16)


def causal_mask(query_steps: int, value_steps: int) -> np.ndarray:
    """``[Tq, Tv]``: True where value step ``j <= i`` for query step ``i`` (Keras's
    ``row_index >= col_index``)."""
    return np.tril(np.ones((query_steps, value_steps), dtype=bool))


def masked_scores(scores: Tensor, keep, robust: bool = False) -> Tensor:
    """``scores - 1e9 * (not keep)`` (``keep`` a bool array broadcasting to the scores); with
    ``robust`` (Keras's ``Softmax(robust_masking=True)``), ``-1e9`` in place of each masked
    score, so a masked score gets no gradient."""
    if keep is None:
        return scores
    keep = np.asarray(convert_to_tensor(keep)._value, dtype=bool)
    if robust:
        floor = np.full(np.broadcast_shapes(keep.shape, tuple(scores.shape)), -_MASKED_SCORE)
        return array_ops.where(
            np.broadcast_to(keep, floor.shape), scores, math_ops.cast(floor, scores.dtype)
        )
    dropped = math_ops.cast(np.logical_not(keep), scores.dtype)
    return math_ops.subtract(scores, math_ops.multiply(dropped, _MASKED_SCORE))


class _DenseAttention(Layer):
    """Keras's ``BaseDenseAttention``: masks, softmax, dropout, the weighted sum."""

    def __init__(self, dropout=0.0, **kwargs) -> None:
        causal = bool(kwargs.pop("causal", False))  # Keras 2's deprecated argument
        super().__init__(**kwargs)
        self.causal = causal
        self.dropout = float(dropout)
        self.supports_masking = True

    def _scores(self, query: Tensor, key: Tensor) -> Tensor:
        raise NotImplementedError

    def call(
        self,
        inputs,
        mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        query, value, key = _split_inputs(self, inputs)
        query_mask, value_mask = _split_masks(self, mask)
        scores = self._scores(query, key)
        keep = None
        if value_mask is not None:
            keep = np.asarray(convert_to_tensor(value_mask)._value, dtype=bool)[:, None, :]
        if self.causal or use_causal_mask:
            causal = causal_mask(scores.shape[-2], scores.shape[-1])
            keep = causal if keep is None else np.logical_and(keep, causal)
        weights = nn_ops.softmax(masked_scores(scores, keep), axis=-1)
        if training and self.dropout > 0:
            weights = nn_ops.dropout(weights, self.dropout)
        result = math_ops.matmul(weights, value)
        if query_mask is not None:
            q_keep = np.asarray(convert_to_tensor(query_mask)._value, dtype=bool)[..., None]
            result = math_ops.multiply(result, math_ops.cast(q_keep, result.dtype))
        if return_attention_scores:
            return result, weights
        return result

    def compute_mask(self, inputs, mask=None):
        """The query mask (None without one)."""
        if mask is None:
            return None
        query_mask = mask[0] if isinstance(mask, (list, tuple)) else None
        return None if query_mask is None else convert_to_tensor(query_mask)

    def get_config(self) -> dict:
        return {**super().get_config(), "dropout": self.dropout}


def _split_inputs(layer, inputs) -> tuple[Tensor, Tensor, Tensor]:
    if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
        raise ValueError(
            f"{type(layer).__name__} layer must be called on a list of inputs, namely "
            f"[query, value] or [query, value, key]. Received: inputs={inputs}."
        )
    query, value = inputs[0], inputs[1]
    key = inputs[2] if len(inputs) == 3 else value
    return query, value, key


def _split_masks(layer, mask) -> tuple:
    if mask is None:
        return None, None
    if not isinstance(mask, (list, tuple)) or len(mask) not in (2, 3):
        raise ValueError(
            f"{type(layer).__name__} layer mask must be a list, namely [query_mask, "
            f"value_mask]. Received: mask={mask}."
        )
    return mask[0], mask[1]


class Attention(_DenseAttention):
    """Dot-product attention (Luong-style), see the module docstring.

    Raises:
        ValueError: ``score_mode`` other than ``'dot'``/``'concat'``; at call, inputs that are
            not ``[query, value(, key)]``.
    """

    def __init__(self, use_scale=False, score_mode="dot", **kwargs) -> None:
        super().__init__(**kwargs)
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        if score_mode not in ("dot", "concat"):
            raise ValueError(
                f"Received: score_mode={score_mode}. Acceptable values are: ['dot', 'concat']"
            )
        self.scale = None
        self.concat_score_weight = None

    def build(self, input_shape) -> None:
        if self.use_scale:
            self.scale = self.add_weight("scale", shape=(), initializer="ones", trainable=True)
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(
                "concat_score_weight", shape=(), initializer="ones", trainable=True
            )
        self.built = True

    def _scores(self, query: Tensor, key: Tensor) -> Tensor:
        if self.score_mode == "dot":
            scores = math_ops.matmul(query, key, transpose_b=True)
            return scores if self.scale is None else math_ops.multiply(scores, self.scale)
        pairs = math_ops.add(array_ops.expand_dims(query, -2), array_ops.expand_dims(key, -3))
        if self.scale is not None:
            pairs = math_ops.multiply(self.scale, pairs)
        summed = reduction_ops.reduce_sum(nn_ops.tanh(pairs), axis=-1)
        return math_ops.multiply(self.concat_score_weight, summed)

    def get_config(self) -> dict:
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode}


class AdditiveAttention(_DenseAttention):
    """Additive attention (Bahdanau-style): ``sum(scale * tanh(q + k), axis=-1)``.

    Raises:
        ValueError: at call, inputs that are not ``[query, value(, key)]``.
    """

    def __init__(self, use_scale=True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.use_scale = bool(use_scale)
        self.scale = None

    def build(self, input_shape) -> None:
        shapes = input_shape if isinstance(input_shape, (list, tuple)) else [input_shape]
        value_shape = as_shape(shapes[1]) if len(shapes) > 1 else as_shape(shapes[0])
        if self.use_scale:
            self.scale = self.add_weight(
                "scale",
                shape=[value_shape[-1]],
                initializer="glorot_uniform",
                trainable=True,
            )
        self.built = True

    def _scores(self, query: Tensor, key: Tensor) -> Tensor:
        pairs = math_ops.add(array_ops.expand_dims(query, -2), array_ops.expand_dims(key, -3))
        tanh = nn_ops.tanh(pairs)
        if self.scale is not None:
            tanh = math_ops.multiply(self.scale, tanh)
        return reduction_ops.reduce_sum(tanh, axis=-1)

    def get_config(self) -> dict:
        return {**super().get_config(), "use_scale": self.use_scale}
