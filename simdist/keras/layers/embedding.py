"""``Embedding``: row ``i`` of a ``(input_dim, output_dim)`` table for each integer index ``i``.

With ``mask_zero=True`` index 0 is padding: the output carries the mask ``indices != 0``
(:mod:`simdist.keras.engine.masking`), which recurrent layers, losses and metrics honour.

Indices outside ``[0, input_dim)`` raise ``InvalidArgumentError`` (as TF does on CPU).
The gradient reaches only the rows that were looked up (summed for repeated indices).
"""

from __future__ import annotations

from simdist.core.convert import convert_to_tensor
from simdist.core.ops import math_ops, slicing_ops
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras import initializers
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import positive_int
from simdist.keras.layers._weights import weight_options

__all__ = ["Embedding"]


class Embedding(Layer):
    """Indices ``[batch, ...]`` -> rows ``[batch, ..., output_dim]`` of the table.

    Raises:
        ValueError: ``input_dim`` or ``output_dim`` is not a positive integer.
        InvalidArgumentError: at call, an index outside ``[0, input_dim)``.
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        activity_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        input_length=None,
        **kwargs,
    ) -> None:
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        self.input_dim = positive_int(input_dim, "input_dim")
        self.output_dim = positive_int(output_dim, "output_dim")
        if embeddings_initializer == "uniform":
            embeddings_initializer = initializers.RandomUniform(-0.05, 0.05)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self._options = weight_options(
            embeddings_regularizer=embeddings_regularizer,
            embeddings_constraint=embeddings_constraint,
        )
        self.input_length = input_length

    def build(self, input_shape) -> None:
        self.embeddings = self.add_weight(
            "embeddings",
            shape=[self.input_dim, self.output_dim],
            initializer=self.embeddings_initializer,
            regularizer=self._options["embeddings_regularizer"],
            constraint=self._options["embeddings_constraint"],
        )
        self.built = True

    def _convert_inputs(self, inputs):
        return inputs  # indices keep their integer dtype (no autocast)

    def call(self, inputs) -> Tensor:
        if is_ragged(inputs):  # Keras 2: the rows kept, each index embedded
            return inputs.with_flat_values(self.call(inputs.flat_values))
        indices = convert_to_tensor(inputs)
        if indices.dtype.is_floating:
            indices = math_ops.cast(indices, "int32")
        if not indices.dtype.is_integer:
            raise TypeError(f"Embedding expects integer indices, got dtype {indices.dtype.name}.")
        return slicing_ops.gather(self.embeddings, indices)  # InvalidArgumentError off range

    def compute_mask(self, inputs, mask=None):
        """``inputs != 0`` with ``mask_zero=True``, else None."""
        if not self.mask_zero or is_ragged(inputs):  # a ragged tensor needs no mask
            return None
        return math_ops.not_equal(convert_to_tensor(inputs), 0)

    def compute_output_shape(self, input_shape) -> TensorShape:
        return TensorShape([*as_shape(input_shape).as_list(), self.output_dim])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
            "mask_zero": self.mask_zero,
            "input_length": self.input_length,
            **self._options.config(),
        }
