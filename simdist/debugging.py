"""``tf.debugging``: runtime assertions and ``check_numerics`` (re-exports only).

The checks live in ``simdist.core.ops.check_ops``.
"""

from simdist.core.ops.check_ops import *  # noqa: F403 - check_ops.__all__ is tf.debugging
