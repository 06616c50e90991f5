"""``tf.config``: execution settings and the simulated host's devices."""

from simdist.config import experimental as experimental
from simdist.config import optimizer as optimizer
from simdist.config import threading as threading
from simdist.config.soft_placement import get_soft_device_placement as get_soft_device_placement
from simdist.config.soft_placement import set_soft_device_placement as set_soft_device_placement
from simdist.core.function import functions_run_eagerly as experimental_functions_run_eagerly  # noqa: F401
from simdist.core.function import functions_run_eagerly as functions_run_eagerly
from simdist.core.function import run_functions_eagerly as experimental_run_functions_eagerly  # noqa: F401
from simdist.core.function import run_functions_eagerly as run_functions_eagerly
from simdist.distribute.tpu_initialization import (
    experimental_connect_to_cluster as experimental_connect_to_cluster,
)
from simdist.distribute.virtual_devices import LogicalDevice as LogicalDevice
from simdist.distribute.virtual_devices import (
    LogicalDeviceConfiguration as LogicalDeviceConfiguration,
)
from simdist.distribute.virtual_devices import PhysicalDevice as PhysicalDevice
from simdist.distribute.virtual_devices import (
    get_logical_device_configuration as get_logical_device_configuration,
)
from simdist.distribute.virtual_devices import get_visible_devices as get_visible_devices
from simdist.distribute.virtual_devices import list_logical_devices as list_logical_devices
from simdist.distribute.virtual_devices import list_physical_devices as list_physical_devices
from simdist.distribute.virtual_devices import (
    set_logical_device_configuration as set_logical_device_configuration,
)
from simdist.distribute.virtual_devices import set_virtual_devices as set_virtual_devices
from simdist.distribute.virtual_devices import set_visible_devices as set_visible_devices
