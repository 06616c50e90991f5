"""``CategoryEncoding``: integer category ids to ``one_hot``/``multi_hot``/``count`` vectors."""

from __future__ import annotations

import numpy as np

from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import positive_int
from simdist.keras.layers.preprocessing._encoding import encode
from simdist.keras.layers.preprocessing._inputs import as_array

__all__ = ["CategoryEncoding"]


class CategoryEncoding(Layer):
    """Ids in ``[0, num_tokens)`` to float32 vectors of length ``num_tokens`` (see
    ``_encoding`` for the shapes each mode gives).

    Raises:
        ValueError: a bad ``num_tokens`` or ``output_mode``.
        InvalidArgumentError: at call, an id outside ``[0, num_tokens)``.
    """

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs) -> None:
        kwargs.pop("dtype", None)
        super().__init__(dtype="float32", **kwargs)
        if sparse:
            raise NotImplementedError("CategoryEncoding(sparse=True) is not yet in simdist.")
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("one_hot", "multi_hot", "count"):
            raise ValueError(
                "`output_mode` must be one of 'count', 'one_hot', 'multi_hot'. Received: "
                f"output_mode={output_mode!r}"
            )
        self.num_tokens = positive_int(num_tokens, "num_tokens")
        self.output_mode = output_mode
        self.sparse = False

    def _convert_inputs(self, inputs):
        return inputs

    def call(self, inputs, count_weights=None) -> Tensor:
        if count_weights is not None and self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not 'count'.")
        indices = as_array(inputs)
        if indices.dtype.kind not in "iu":
            indices = indices.astype(np.int64)
        weights = None if count_weights is None else as_array(count_weights)
        return encode(indices, self.num_tokens, self.output_mode, weights, name=self.name)

    def compute_output_shape(self, input_shape) -> TensorShape:
        dims = as_shape(input_shape).as_list()
        if not dims:
            return TensorShape([self.num_tokens])
        if self.output_mode == "one_hot" and dims[-1] != 1:
            return TensorShape([*dims, self.num_tokens])
        return TensorShape([*dims[:-1], self.num_tokens])

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "num_tokens": self.num_tokens,
            "output_mode": self.output_mode,
            "sparse": False,
        }
