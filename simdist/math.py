"""``tf.math``: every math op of the core (re-exports only)."""

from simdist.core.ops.math_ops import *  # noqa: F403 - math_ops.__all__ is tf.math
