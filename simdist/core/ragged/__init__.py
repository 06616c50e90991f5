"""Ragged tensors: ``tf.RaggedTensor``, ``tf.RaggedTensorSpec`` and the ``tf.ragged`` ops."""

from simdist.core.ragged.ragged_math import stack as stack
from simdist.core.ragged.ragged_ops import constant as constant
from simdist.core.ragged.ragged_ops import map_flat_values as map_flat_values
from simdist.core.ragged.ragged_spec import RaggedTensorSpec as RaggedTensorSpec
from simdist.core.ragged.ragged_tensor import RaggedTensor as RaggedTensor
from simdist.core.ragged.ragged_tensor import is_ragged as is_ragged
