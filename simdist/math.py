"""``tf.math``: every math op of the core (re-exports only)."""

from simdist import symbolic_dispatch as _symbolic_dispatch
from simdist.core.ops.math_ops import *  # noqa: F403 - math_ops.__all__ is tf.math
from simdist.core.ops.nn_ops import sigmoid as sigmoid
from simdist.core.ops.nn_ops import softplus as softplus
from simdist.core.ops.nn_ops import tanh as tanh
from simdist.core.ops.segment_ops import *  # noqa: F403 - segment_sum, unsorted_segment_sum...
from simdist.core.ops.sort_ops import top_k as top_k

_symbolic_dispatch.install(globals(), "math")  # on KerasTensors the ops make Keras op layers
