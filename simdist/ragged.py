"""``tf.ragged``: building and mapping ragged tensors (re-exports ``simdist.core.ragged``)."""

from simdist.core.ragged import constant as constant
from simdist.core.ragged import map_flat_values as map_flat_values
from simdist.core.ragged import stack as stack
from simdist.core.ragged.ragged_spec import RaggedTensorSpec as RaggedTensorSpec
from simdist.core.ragged.ragged_tensor import RaggedTensor as RaggedTensor

__all__ = ["RaggedTensor", "RaggedTensorSpec", "constant", "map_flat_values", "stack"]
