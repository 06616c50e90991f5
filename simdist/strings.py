"""``tf.strings``: the string ops (re-exports ``simdist.core.strings``)."""

from simdist.core.strings import *  # noqa: F403
from simdist.core.strings import __all__ as __all__
