"""``MultiHeadAttention``: scaled dot-product attention over several heads, as Keras 2.

``layer(query, value, key=None)`` with ``query`` ``[batch, *T, dim_q]`` and ``value``/``key``
``[batch, *S, dim_v/dim_k]`` (``key`` defaults to ``value``):

1. projections, each Keras's ``EinsumDense`` with its weight names and shapes:
   ``query/kernel`` ``(dim_q, heads, key_dim)`` and ``query/bias`` ``(heads, key_dim)``,
   likewise ``key/*`` and ``value/*`` (``value_dim``, default ``key_dim``);
2. scores ``[batch, heads, *T, *S]`` = ``(q / sqrt(key_dim)) . k`` per head;
3. the mask: ``attention_mask`` ``[batch, *T, *S]`` (True = attend), and-ed with the Keras
   masks of the inputs (query ``[batch, T, 1]``, value and key ``[batch, 1, S]``) and with
   the lower-triangular mask for ``use_causal_mask=True``; masked scores get ``-1e9`` added
   (Keras's ``Softmax(mask)``; with ``softmax_robust_masking=True`` they are replaced by
   ``-1e9``), then the softmax over the value positions;
4. dropout of the attention weights when ``training``; the returned attention scores are the
   weights before dropout (as Keras's);
5. the weighted sum of the value heads and the output projection ``attention_output/kernel``
   ``(heads, value_dim, *output_shape)`` (``output_shape`` defaults to ``dim_q``) and
   ``attention_output/bias``.

The weights are made on the first call (as Keras's ``_build_from_signature``), in the order
``get_weights`` lists them: query, key, value, attention_output (kernel then bias each).
Several position axes (``*T``, ``*S``) attend jointly, Keras's ``attention_axes=None``; other
``attention_axes`` than all of them raise NotImplementedError.
"""

from __future__ import annotations

import math

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, math_ops, nn_ops
from simdist.core.shape import as_shape
from simdist.core.tensor import Tensor
from simdist.keras import constraints, initializers, regularizers
from simdist.keras.engine import masking
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import positive_int
from simdist.keras.layers.attention import causal_mask, masked_scores

__all__ = ["MultiHeadAttention"]


def _bool(mask) -> np.ndarray:
    return np.asarray(convert_to_tensor(mask)._value, dtype=bool)


class MultiHeadAttention(Layer):
    """Multi-head attention (see the module docstring).

    Raises:
        ValueError: bad ``num_heads``/``key_dim``; at call, inputs of rank below 3 or an
            ``attention_mask`` that does not broadcast to ``[batch, *T, *S]``.
        NotImplementedError: ``attention_axes`` that are not all the position axes.
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        softmax_robust_masking=False,
        **kwargs,
    ) -> None:
        query_shape = kwargs.pop("query_shape", None)
        key_shape = kwargs.pop("key_shape", None)
        value_shape = kwargs.pop("value_shape", None)
        super().__init__(**kwargs)
        self.supports_masking = True
        self._num_heads = positive_int(num_heads, "num_heads")
        self._key_dim = positive_int(key_dim, "key_dim")
        self._value_dim = positive_int(value_dim, "value_dim") if value_dim else self._key_dim
        self._dropout = float(dropout)
        self._use_bias = bool(use_bias)
        self._output_shape = output_shape
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        self._attention_axes = None if attention_axes is None else tuple(attention_axes)
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        self._softmax_robust_masking = bool(softmax_robust_masking)
        self._built_from_signature = False
        self._query_shape, self._key_shape, self._value_shape = None, None, None
        if query_shape is not None:  # from_config: build as the saved layer was built
            self._build_from_signature(query_shape, value_shape, key_shape)

    # --- weights ------------------------------------------------------------------------
    def _projection(self, name: str, kernel_shape: list, bias_shape: list) -> tuple:
        kernel = self.add_weight(
            f"{name}/kernel",
            shape=kernel_shape,
            initializer=initializers.get(initializers.serialize(self._kernel_initializer)),
            regularizer=self._kernel_regularizer,
            constraint=self._kernel_constraint,
        )
        bias = None
        if self._use_bias:
            bias = self.add_weight(
                f"{name}/bias",
                shape=bias_shape,
                initializer=initializers.get(initializers.serialize(self._bias_initializer)),
                regularizer=self._bias_regularizer,
                constraint=self._bias_constraint,
            )
        return kernel, bias

    def _output_dims(self) -> list[int]:
        if self._output_shape is None:
            return [int(self._query_shape[-1])]
        if isinstance(self._output_shape, int):
            return [self._output_shape]
        return [int(d) for d in self._output_shape]

    def _build_from_signature(self, query_shape, value_shape, key_shape=None) -> None:
        query_shape = as_shape(query_shape)
        value_shape = as_shape(value_shape)
        key_shape = value_shape if key_shape is None else as_shape(key_shape)
        self._query_shape, self._value_shape, self._key_shape = (
            query_shape.as_list(),
            value_shape.as_list(),
            key_shape.as_list(),
        )
        rank = query_shape.rank
        if rank is None or rank < 3:
            raise ValueError(
                f"MultiHeadAttention expects a query of shape (batch, ..., dim) of rank >= 3; "
                f"received query_shape={query_shape}."
            )
        every_axis = tuple(range(1, rank - 1))
        if self._attention_axes is not None:
            axes = tuple(a % rank for a in self._attention_axes)
            if tuple(sorted(axes)) != every_axis:
                raise NotImplementedError(
                    f"simdist's MultiHeadAttention attends over all position axes "
                    f"{every_axis} (attention_axes=None); received attention_axes="
                    f"{self._attention_axes}."
                )
        self._attention_axes = every_axis  # as Keras 2 reports them once built
        heads, kd, vd = self._num_heads, self._key_dim, self._value_dim
        self._query_kernel, self._query_bias = self._projection(
            "query", [query_shape[-1], heads, kd], [heads, kd]
        )
        self._key_kernel, self._key_bias = self._projection(
            "key", [key_shape[-1], heads, kd], [heads, kd]
        )
        self._value_kernel, self._value_bias = self._projection(
            "value", [value_shape[-1], heads, vd], [heads, vd]
        )
        out_dims = self._output_dims()
        self._output_kernel, self._output_bias = self._projection(
            "attention_output", [heads, vd, *out_dims], out_dims
        )
        self._built_from_signature = True

    # --- the computation ----------------------------------------------------------------
    @staticmethod
    def _project(x: Tensor, kernel, bias) -> Tensor:
        """``einsum('b...c,cde->b...de', x, kernel) + bias`` as one matmul."""
        dim, heads, size = kernel.shape
        out = math_ops.matmul(x, array_ops.reshape(kernel, [dim, heads * size]))
        out = array_ops.reshape(out, [*x.shape[:-1], heads, size])
        return out if bias is None else math_ops.add(out, bias)

    def _attention_mask(self, query, value, key, attention_mask, use_causal_mask, steps):
        """The bool ``[batch, T, S]`` mask (positions flattened), or None."""
        t_steps, s_steps = steps
        batch = query.shape[0]
        auto = None
        for mask, axis in (
            (masking.mask_of(query), "query"),
            (masking.mask_of(value), "value"),
            (masking.mask_of(key), "value"),
        ):
            if mask is None:
                continue
            flat = _bool(mask).reshape(batch, -1)
            part = flat[:, :, None] if axis == "query" else flat[:, None, :]
            auto = part if auto is None else np.logical_and(auto, part)
        if use_causal_mask:
            causal = causal_mask(t_steps, s_steps)[None]
            auto = causal if auto is None else np.logical_and(auto, causal)
        if attention_mask is None:
            return auto
        given = _bool(attention_mask)
        target = (batch, *query.shape[1:-1], *value.shape[1:-1])
        try:
            given = np.broadcast_to(given, target) if given.ndim == len(target) else None
        except ValueError:
            given = None
        if given is None:
            raise ValueError(
                f"MultiHeadAttention: attention_mask of shape {list(_bool(attention_mask).shape)} "
                f"does not broadcast to (batch, query positions, value positions) = "
                f"{list(target)}."
            )
        given = given.reshape(batch, t_steps, s_steps)
        return given if auto is None else np.logical_and(given, auto)

    def call(
        self,
        query,
        value,
        key=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        query, value = convert_to_tensor(query), convert_to_tensor(value)
        key = value if key is None else convert_to_tensor(key)
        if not self._built_from_signature:
            self._build_from_signature(query.shape, value.shape, key.shape)
        batch = query.shape[0]
        t_shape, s_shape = list(query.shape[1:-1]), list(value.shape[1:-1])
        t_steps, s_steps = math.prod(t_shape), math.prod(s_shape)
        keep = self._attention_mask(
            query, value, key, attention_mask, use_causal_mask, (t_steps, s_steps)
        )
        heads, kd, vd = self._num_heads, self._key_dim, self._value_dim
        q = self._project(query, self._query_kernel, self._query_bias)
        k = self._project(key, self._key_kernel, self._key_bias)
        v = self._project(value, self._value_kernel, self._value_bias)
        # [batch, heads, positions, size]: the heads as a batch axis of one matmul
        q = array_ops.transpose(array_ops.reshape(q, [batch, t_steps, heads, kd]), [0, 2, 1, 3])
        k = array_ops.transpose(array_ops.reshape(k, [batch, s_steps, heads, kd]), [0, 2, 1, 3])
        v = array_ops.transpose(array_ops.reshape(v, [batch, s_steps, heads, vd]), [0, 2, 1, 3])
        q = math_ops.multiply(q, 1.0 / math.sqrt(float(kd)))
        scores = math_ops.matmul(q, k, transpose_b=True)  # [batch, heads, T, S]
        weights = nn_ops.softmax(
            masked_scores(
                scores, None if keep is None else keep[:, None], self._softmax_robust_masking
            ),
            axis=-1,
        )
        dropped = weights
        if training and self._dropout > 0:
            dropped = nn_ops.dropout(weights, self._dropout)
        mixed = math_ops.matmul(dropped, v)  # [batch, heads, T, vd]
        mixed = array_ops.reshape(array_ops.transpose(mixed, [0, 2, 1, 3]), [-1, heads * vd])
        out_dims = self._output_dims()
        kernel = array_ops.reshape(self._output_kernel, [heads * vd, math.prod(out_dims)])
        output = array_ops.reshape(math_ops.matmul(mixed, kernel), [batch, *t_shape, *out_dims])
        if self._output_bias is not None:
            output = math_ops.add(output, self._output_bias)
        if self.activity_regularizer is not None:
            output = regularizers.record_activity(self, output)
        if return_attention_scores:
            return output, array_ops.reshape(weights, [batch, heads, *t_shape, *s_shape])
        return output

    def compute_mask(self, inputs, mask=None):
        """The query's mask (Keras 2 passes the first input's mask on)."""
        return mask[0] if isinstance(mask, (list, tuple)) else mask

    def get_config(self) -> dict:
        def penalty(module, value):
            return None if value is None else module.serialize(value)

        return {
            **super().get_config(),
            "num_heads": self._num_heads,
            "key_dim": self._key_dim,
            "value_dim": self._value_dim,
            "dropout": self._dropout,
            "use_bias": self._use_bias,
            "output_shape": self._output_shape,
            "attention_axes": self._attention_axes,
            "kernel_initializer": initializers.serialize(self._kernel_initializer),
            "bias_initializer": initializers.serialize(self._bias_initializer),
            "kernel_regularizer": penalty(regularizers, self._kernel_regularizer),
            "bias_regularizer": penalty(regularizers, self._bias_regularizer),
            "activity_regularizer": penalty(regularizers, self.activity_regularizer),
            "kernel_constraint": penalty(constraints, self._kernel_constraint),
            "bias_constraint": penalty(constraints, self._bias_constraint),
            "query_shape": self._query_shape,
            "key_shape": self._key_shape,
            "value_shape": self._value_shape,
            "softmax_robust_masking": self._softmax_robust_masking,
        }
