"""simdist's core: tensors, dtypes, ops with their gradients, GradientTape, Variable, function."""

from simdist.core import dtypes as dtypes
from simdist.core import nest as nest
from simdist.core.convert import constant as constant
from simdist.core.convert import convert_to_tensor as convert_to_tensor
from simdist.core.convert import is_tensor as is_tensor
from simdist.core.device import DeviceSpec as DeviceSpec
from simdist.core.device import device as device
from simdist.core.function import executing_eagerly as executing_eagerly
from simdist.core.function import function as function
from simdist.core.shape import TensorShape as TensorShape
from simdist.core.tape import GradientTape as GradientTape
from simdist.core.tape import UnconnectedGradients as UnconnectedGradients
from simdist.core.tape import stop_gradient as stop_gradient
from simdist.core.tensor import Tensor as Tensor
from simdist.core.tensor_spec import TensorSpec as TensorSpec
from simdist.core.variables import Variable as Variable
from simdist.core.variables import VariableAggregation as VariableAggregation
from simdist.core.variables import VariableSynchronization as VariableSynchronization
from simdist.core.variables import variable_creator_scope as variable_creator_scope
