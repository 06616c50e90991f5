"""``tf.config``: execution settings and the simulated host's devices."""

from simdist.core.function import functions_run_eagerly as functions_run_eagerly
from simdist.core.function import run_functions_eagerly as run_functions_eagerly
from simdist.distribute.tpu_initialization import (
    experimental_connect_to_cluster as experimental_connect_to_cluster,
)
from simdist.distribute.virtual_devices import LogicalDevice as LogicalDevice
from simdist.distribute.virtual_devices import PhysicalDevice as PhysicalDevice
from simdist.distribute.virtual_devices import list_logical_devices as list_logical_devices
from simdist.distribute.virtual_devices import list_physical_devices as list_physical_devices
from simdist.distribute.virtual_devices import set_virtual_devices as set_virtual_devices
