"""``tf.distribute.experimental.coordinator``: ClusterCoordinator, RemoteValue, PerWorkerValues
(re-exports only). Fault plans for the coordinator are ``simdist.sim.FaultPlan``."""

from simdist.distribute.coordinator.cluster_coordinator import (
    ClusterCoordinator as ClusterCoordinator,
)
from simdist.distribute.coordinator.remote_value import (  # noqa: F401 - TF's newer name
    PerWorkerValues as PerWorkerValue,
)
from simdist.distribute.coordinator.remote_value import PerWorkerValues as PerWorkerValues
from simdist.distribute.coordinator.remote_value import RemoteValue as RemoteValue
