"""``tf.config.experimental``: TF's older names for the device settings, and memory growth."""

from simdist.config.soft_placement import (
    enable_op_determinism,
    enable_tensor_float_32_execution,
    tensor_float_32_execution_enabled,
)
from simdist.distribute.virtual_devices import (
    LogicalDeviceConfiguration as VirtualDeviceConfiguration,
)
from simdist.distribute.virtual_devices import (
    get_logical_device_configuration as get_virtual_device_configuration,
)
from simdist.distribute.virtual_devices import (
    get_memory_growth,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_memory_growth,
    set_visible_devices,
)
from simdist.distribute.virtual_devices import (
    set_logical_device_configuration as set_virtual_device_configuration,
)

__all__ = [
    "VirtualDeviceConfiguration",
    "enable_op_determinism",
    "enable_tensor_float_32_execution",
    "get_memory_growth",
    "get_virtual_device_configuration",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "set_memory_growth",
    "set_virtual_device_configuration",
    "set_visible_devices",
    "tensor_float_32_execution_enabled",
]
