"""``Masking``: mark the time steps whose features all equal ``mask_value`` as padding.

For inputs ``[batch, time, features]``, a step is kept when any feature differs from
``mask_value``; the output is the input with masked steps set to zero, and it carries the
mask ``[batch, time]`` (:mod:`simdist.keras.engine.masking`).
"""

from __future__ import annotations

from simdist.core.ops import array_ops, math_ops, reduction_ops
from simdist.core.tensor import Tensor
from simdist.keras.engine import masking
from simdist.keras.engine.base_layer import Layer

__all__ = ["Masking"]


class Masking(Layer):
    """Masks the steps equal to ``mask_value`` in every feature (default ``0.0``)."""

    def __init__(self, mask_value=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def _keep(self, inputs) -> Tensor:
        return reduction_ops.reduce_any(
            math_ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=True
        )

    def compute_mask(self, inputs, mask=None):
        return array_ops.squeeze(self._keep(inputs), axis=-1)

    def call(self, inputs) -> Tensor:
        keep = self._keep(inputs)
        outputs = math_ops.multiply(inputs, math_ops.cast(keep, inputs.dtype))
        masking.set_mask(outputs, array_ops.squeeze(keep, axis=-1))
        return outputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "mask_value": self.mask_value}
