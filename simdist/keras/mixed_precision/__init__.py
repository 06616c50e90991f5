"""``tf.keras.mixed_precision``: dtype policies and loss scaling (re-exports only).

``set_global_policy("mixed_float16")`` makes new layers compute in float16 with float32
weights; ``model.compile`` then wraps the optimizer in a ``LossScaleOptimizer``, as Keras 2
does. ``"mixed_bfloat16"`` is refused (NumPy has no bfloat16; docs/differences.md).
"""

from simdist.keras.mixed_precision.loss_scale_optimizer import (
    LossScaleOptimizer as LossScaleOptimizer,
)
from simdist.keras.mixed_precision.policy import Policy as Policy
from simdist.keras.mixed_precision.policy import global_policy as global_policy
from simdist.keras.mixed_precision.policy import set_global_policy as set_global_policy
