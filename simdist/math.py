"""``tf.math``: every math op of the core (re-exports only)."""

from simdist import symbolic_dispatch as _symbolic_dispatch
from simdist.core.ops.histogram_ops import bincount as bincount
from simdist.core.ops.histogram_ops import confusion_matrix as confusion_matrix
from simdist.core.ops.linalg_ops import l2_normalize as l2_normalize
from simdist.core.ops.math_ops import *  # noqa: F403 - math_ops.__all__ is tf.math
from simdist.core.ops.nn_ops import sigmoid as sigmoid
from simdist.core.ops.nn_ops import softplus as softplus
from simdist.core.ops.nn_ops import tanh as tanh
from simdist.core.ops.scan_ops import cumprod as cumprod
from simdist.core.ops.scan_ops import cumsum as cumsum
from simdist.core.ops.segment_ops import *  # noqa: F403 - segment_sum, unsorted_segment_sum...
from simdist.core.ops.sort_ops import top_k as top_k
from simdist.core.ops.special_ops import digamma as digamma
from simdist.core.ops.special_ops import erf as erf
from simdist.core.ops.special_ops import erfc as erfc
from simdist.core.ops.special_ops import is_finite as is_finite
from simdist.core.ops.special_ops import is_inf as is_inf
from simdist.core.ops.special_ops import is_nan as is_nan
from simdist.core.ops.special_ops import lgamma as lgamma
from simdist.core.ops.special_ops import polyval as polyval

_symbolic_dispatch.install(globals(), "math")  # on KerasTensors the ops make Keras op layers
