"""``tf.distribute``: strategies, contexts, distributed values (re-exports only)."""

from simdist.distribute import cluster_resolver as cluster_resolver
from simdist.distribute import coordinator as coordinator
from simdist.distribute import experimental as experimental
from simdist.distribute.collective_all_reduce_strategy import (
    MultiWorkerMirroredStrategy as MultiWorkerMirroredStrategy,
)
from simdist.distribute.cross_device_ops import CrossDeviceOps as CrossDeviceOps
from simdist.distribute.cross_device_ops import (
    HierarchicalCopyAllReduce as HierarchicalCopyAllReduce,
)
from simdist.distribute.cross_device_ops import NcclAllReduce as NcclAllReduce
from simdist.distribute.cross_device_ops import ReductionToOneDevice as ReductionToOneDevice
from simdist.distribute.distribute_lib import ReplicaContext as ReplicaContext
from simdist.distribute.distribute_lib import get_replica_context as get_replica_context
from simdist.distribute.distribute_lib import get_strategy as get_strategy
from simdist.distribute.distribute_lib import has_strategy as has_strategy
from simdist.distribute.distribute_lib import in_cross_replica_context as in_cross_replica_context
from simdist.distribute.input_context import InputContext as InputContext
from simdist.distribute.input_context import InputOptions as InputOptions
from simdist.distribute.input_context import InputReplicationMode as InputReplicationMode
from simdist.distribute.input_lib import DistributedDataset as DistributedDataset
from simdist.distribute.input_lib import DistributedIterator as DistributedIterator
from simdist.distribute.mirrored_strategy import MirroredStrategy as MirroredStrategy
from simdist.distribute.one_device_strategy import OneDeviceStrategy as OneDeviceStrategy
from simdist.distribute.parameter_server_strategy import (
    ParameterServerStrategy as ParameterServerStrategy,
)
from simdist.distribute.reduce_util import ReduceOp as ReduceOp
from simdist.distribute.runner import CollectiveMismatchError as CollectiveMismatchError
from simdist.distribute.server import Server as Server
from simdist.distribute.set_strategy import experimental_set_strategy as experimental_set_strategy
from simdist.distribute.strategy import Strategy as Strategy
from simdist.distribute.strategy import StrategyExtended as StrategyExtended
from simdist.distribute.tpu_strategy import RunOptions as RunOptions
from simdist.distribute.tpu_strategy import TPUStrategy as TPUStrategy
from simdist.distribute.values import DistributedValues as DistributedValues
