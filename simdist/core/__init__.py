"""simdist's core: tensors, dtypes, ops with their gradients, GradientTape, Variable, function."""

from types import ModuleType as _ModuleType

from simdist.core import blas_buffers as _blas_buffers
from simdist.core import blas_threads as _blas_threads
from simdist.core import dtypes as dtypes
from simdist.core import malloc_policy as _malloc_policy
from simdist.core import nest as nest
from simdist.core import overloads as _overloads  # noqa: F401 - installs x + y, x[i]...
from simdist.core.control_flow import cond as cond
from simdist.core.control_flow import control_dependencies as control_dependencies
from simdist.core.control_flow import while_loop as while_loop
from simdist.core.convert import constant as constant
from simdist.core.convert import convert_to_tensor as convert_to_tensor
from simdist.core.convert import is_tensor as is_tensor
from simdist.core.device import DeviceSpec as DeviceSpec
from simdist.core.device import device as device
from simdist.core.dtypes import DType as DType
from simdist.core.dtypes import as_dtype as as_dtype
from simdist.core.dtypes import bool as bool
from simdist.core.dtypes import double as double
from simdist.core.dtypes import float16 as float16
from simdist.core.dtypes import float32 as float32
from simdist.core.dtypes import float64 as float64
from simdist.core.dtypes import half as half
from simdist.core.dtypes import int8 as int8
from simdist.core.dtypes import int16 as int16
from simdist.core.dtypes import int32 as int32
from simdist.core.dtypes import int64 as int64
from simdist.core.dtypes import string as string
from simdist.core.dtypes import uint8 as uint8
from simdist.core.function import executing_eagerly as executing_eagerly
from simdist.core.function import function as function
from simdist.core.module import Module as Module
from simdist.core.name_scope import name_scope as name_scope

# --- ops: TF's top-level names only (tf.math.* / tf.nn.* namespaces re-export math_ops) ---
from simdist.core.ops.array_ops import broadcast_to as broadcast_to
from simdist.core.ops.array_ops import concat as concat
from simdist.core.ops.array_ops import expand_dims as expand_dims
from simdist.core.ops.array_ops import identity as identity
from simdist.core.ops.array_ops import identity_n as identity_n
from simdist.core.ops.array_ops import pad as pad
from simdist.core.ops.array_ops import rank as rank
from simdist.core.ops.array_ops import reshape as reshape
from simdist.core.ops.array_ops import shape as shape
from simdist.core.ops.array_ops import shape_n as shape_n
from simdist.core.ops.array_ops import size as size
from simdist.core.ops.array_ops import split as split
from simdist.core.ops.array_ops import squeeze as squeeze
from simdist.core.ops.array_ops import stack as stack
from simdist.core.ops.array_ops import tile as tile
from simdist.core.ops.array_ops import transpose as transpose
from simdist.core.ops.array_ops import unstack as unstack
from simdist.core.ops.array_ops import where as where
from simdist.core.ops.check_ops import assert_equal as assert_equal
from simdist.core.ops.check_ops import assert_greater as assert_greater
from simdist.core.ops.check_ops import assert_less as assert_less
from simdist.core.ops.check_ops import assert_rank as assert_rank
from simdist.core.ops.clip_ops import clip_by_global_norm as clip_by_global_norm
from simdist.core.ops.clip_ops import clip_by_norm as clip_by_norm
from simdist.core.ops.clock_ops import timestamp as timestamp
from simdist.core.ops.contraction_ops import tensordot as tensordot
from simdist.core.ops.creation_ops import fill as fill
from simdist.core.ops.creation_ops import one_hot as one_hot
from simdist.core.ops.creation_ops import ones as ones
from simdist.core.ops.creation_ops import ones_like as ones_like
from simdist.core.ops.creation_ops import range as range
from simdist.core.ops.creation_ops import zeros as zeros
from simdist.core.ops.creation_ops import zeros_like as zeros_like
from simdist.core.ops.custom_gradient import custom_gradient as custom_gradient
from simdist.core.ops.custom_gradient import recompute_grad as recompute_grad
from simdist.core.ops.einsum_ops import einsum as einsum
from simdist.core.ops.graph_gradients import gradients as gradients
from simdist.core.ops.graph_gradients import hessians as hessians
from simdist.core.ops.grid_ops import eye as eye
from simdist.core.ops.grid_ops import linspace as linspace
from simdist.core.ops.grid_ops import meshgrid as meshgrid
from simdist.core.ops.histogram_ops import histogram_fixed_width as histogram_fixed_width
from simdist.core.ops.logging_ops import print as print
from simdist.core.ops.manip_ops import boolean_mask as boolean_mask
from simdist.core.ops.manip_ops import repeat as repeat
from simdist.core.ops.manip_ops import roll as roll
from simdist.core.ops.map_ops import map_fn as map_fn
from simdist.core.ops.map_ops import vectorized_map as vectorized_map
from simdist.core.ops.math_ops import abs as abs
from simdist.core.ops.math_ops import add as add
from simdist.core.ops.math_ops import add_n as add_n
from simdist.core.ops.math_ops import argmax as argmax
from simdist.core.ops.math_ops import argmin as argmin
from simdist.core.ops.math_ops import cast as cast
from simdist.core.ops.math_ops import clip_by_value as clip_by_value
from simdist.core.ops.math_ops import divide as divide
from simdist.core.ops.math_ops import equal as equal
from simdist.core.ops.math_ops import exp as exp
from simdist.core.ops.math_ops import floor as floor
from simdist.core.ops.math_ops import greater as greater
from simdist.core.ops.math_ops import greater_equal as greater_equal
from simdist.core.ops.math_ops import less as less
from simdist.core.ops.math_ops import less_equal as less_equal
from simdist.core.ops.math_ops import logical_and as logical_and
from simdist.core.ops.math_ops import logical_not as logical_not
from simdist.core.ops.math_ops import logical_or as logical_or
from simdist.core.ops.math_ops import matmul as matmul
from simdist.core.ops.math_ops import maximum as maximum
from simdist.core.ops.math_ops import minimum as minimum
from simdist.core.ops.math_ops import multiply as multiply
from simdist.core.ops.math_ops import negative as negative
from simdist.core.ops.math_ops import not_equal as not_equal
from simdist.core.ops.math_ops import pow as pow
from simdist.core.ops.math_ops import reduce_all as reduce_all
from simdist.core.ops.math_ops import reduce_any as reduce_any
from simdist.core.ops.math_ops import reduce_logsumexp as reduce_logsumexp
from simdist.core.ops.math_ops import reduce_max as reduce_max
from simdist.core.ops.math_ops import reduce_mean as reduce_mean
from simdist.core.ops.math_ops import reduce_min as reduce_min
from simdist.core.ops.math_ops import reduce_prod as reduce_prod
from simdist.core.ops.math_ops import reduce_sum as reduce_sum
from simdist.core.ops.math_ops import round as round
from simdist.core.ops.math_ops import saturate_cast as saturate_cast
from simdist.core.ops.math_ops import sign as sign
from simdist.core.ops.math_ops import sqrt as sqrt
from simdist.core.ops.math_ops import square as square
from simdist.core.ops.math_ops import subtract as subtract
from simdist.core.ops.math_ops import truediv as truediv
from simdist.core.ops.nd_index_ops import gather_nd as gather_nd
from simdist.core.ops.nd_index_ops import scatter_nd as scatter_nd
from simdist.core.ops.nd_index_ops import tensor_scatter_nd_add as tensor_scatter_nd_add
from simdist.core.ops.nd_index_ops import tensor_scatter_nd_sub as tensor_scatter_nd_sub
from simdist.core.ops.nd_index_ops import tensor_scatter_nd_update as tensor_scatter_nd_update
from simdist.core.ops.scan_ops import cumsum as cumsum
from simdist.core.ops.script_ops import numpy_function as numpy_function
from simdist.core.ops.script_ops import py_function as py_function
from simdist.core.ops.search_ops import searchsorted as searchsorted
from simdist.core.ops.search_ops import unique as unique
from simdist.core.ops.search_ops import unique_with_counts as unique_with_counts
from simdist.core.ops.slicing_ops import gather as gather
from simdist.core.ops.slicing_ops import newaxis as newaxis
from simdist.core.ops.slicing_ops import reverse as reverse
from simdist.core.ops.slicing_ops import slice as slice
from simdist.core.ops.slicing_ops import strided_slice as strided_slice
from simdist.core.ops.sort_ops import argsort as argsort
from simdist.core.ops.sort_ops import sort as sort
from simdist.core.ragged import RaggedTensor as RaggedTensor
from simdist.core.ragged import RaggedTensorSpec as RaggedTensorSpec
from simdist.core.shape import TensorShape as TensorShape
from simdist.core.tape import GradientTape as GradientTape
from simdist.core.tape import UnconnectedGradients as UnconnectedGradients
from simdist.core.tape import stop_gradient as stop_gradient
from simdist.core.tensor import Tensor as Tensor
from simdist.core.tensor_array import TensorArray as TensorArray
from simdist.core.tensor_spec import TensorSpec as TensorSpec
from simdist.core.variables import Variable as Variable
from simdist.core.variables import VariableAggregation as VariableAggregation
from simdist.core.variables import VariableSynchronization as VariableSynchronization
from simdist.core.variables import variable_creator_scope as variable_creator_scope

# The face does `from simdist.core import *`: export the names above, not the submodules
# (tensor, tape, ...) that importing them binds here; dtypes and nest are namespaces TF has.
__all__ = sorted(
    name
    for name, value in globals().items()
    if not name.startswith("_")
    and (not isinstance(value, _ModuleType) or name in ("dtypes", "nest"))
)

_blas_threads.apply_policy()  # one BLAS thread (or SIMDIST_BLAS_THREADS): see blas_threads
_malloc_policy.apply_policy()  # large temporaries reuse the heap (or SIMDIST_MALLOC): see it
_blas_buffers.map_buffers(1)  # the caller's packing buffer (or SIMDIST_BLAS_BUFFERS): see it
