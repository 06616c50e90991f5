"""``tf.tpu``: connecting to, initializing and shutting down the simulated TPU system.

A public face only: the process state is :mod:`simdist.distribute.tpu_system`, the validated
calls :mod:`simdist.distribute.tpu_initialization`.
"""

from simdist.distribute.tpu_initialization import (
    experimental as experimental,
)
from simdist.distribute.tpu_initialization import (
    experimental_connect_to_cluster as experimental_connect_to_cluster,
)
from simdist.distribute.tpu_initialization import (
    initialize_tpu_system as initialize_tpu_system,
)
from simdist.distribute.tpu_initialization import (
    shutdown_tpu_system as shutdown_tpu_system,
)
from simdist.distribute.tpu_system import Topology as Topology
from simdist.distribute.tpu_system import TPUSystem as TPUSystem
from simdist.distribute.tpu_system import initialized_system as initialized_system
from simdist.distribute.tpu_system import require_initialized as require_initialized

__all__ = [
    "Topology",
    "TPUSystem",
    "initialize_tpu_system",
    "shutdown_tpu_system",
    "experimental_connect_to_cluster",
    "initialized_system",
    "require_initialized",
    "experimental",
]
