"""``tf.math``: every math op of the core (re-exports only)."""

from simdist.core.ops.histogram_ops import bincount as bincount
from simdist.core.ops.histogram_ops import confusion_matrix as confusion_matrix
from simdist.core.ops.math_ops import *  # noqa: F403 - math_ops.__all__ is tf.math
from simdist.core.ops.scan_ops import cumprod as cumprod
from simdist.core.ops.scan_ops import cumsum as cumsum
from simdist.core.ops.segment_ops import *  # noqa: F403 - segment_sum, unsorted_segment_sum...
from simdist.core.ops.sort_ops import top_k as top_k
