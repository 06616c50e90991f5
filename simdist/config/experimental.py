"""``tf.config.experimental``: TF's older names for the device settings, and memory growth."""

from simdist.config.soft_placement import enable_op_determinism as enable_op_determinism
from simdist.config.soft_placement import (
    enable_tensor_float_32_execution as enable_tensor_float_32_execution,
)
from simdist.config.soft_placement import (
    tensor_float_32_execution_enabled as tensor_float_32_execution_enabled,
)
from simdist.distribute.virtual_devices import get_memory_growth as get_memory_growth
from simdist.distribute.virtual_devices import get_visible_devices as get_visible_devices
from simdist.distribute.virtual_devices import list_logical_devices as list_logical_devices
from simdist.distribute.virtual_devices import list_physical_devices as list_physical_devices
from simdist.distribute.virtual_devices import set_memory_growth as set_memory_growth
from simdist.distribute.virtual_devices import set_visible_devices as set_visible_devices
