"""``tf.distribute.experimental``: the strategies TF still files as experimental."""

from simdist.distribute import coordinator as coordinator
from simdist.distribute import partitioners as partitioners
from simdist.distribute.central_storage_strategy import (
    CentralStorageStrategy as CentralStorageStrategy,
)
from simdist.distribute.collective_all_reduce_strategy import (  # noqa: F401 - re-export
    _ExperimentalMultiWorkerMirroredStrategy as MultiWorkerMirroredStrategy,
)
from simdist.distribute.collective_util import CollectiveCommunication as CollectiveCommunication
from simdist.distribute.collective_util import (
    CommunicationImplementation as CommunicationImplementation,
)
from simdist.distribute.collective_util import CommunicationOptions as CommunicationOptions
from simdist.distribute.input_context import ValueContext as ValueContext
from simdist.distribute.parameter_server_strategy import (
    ParameterServerStrategy as ParameterServerStrategy,
)
from simdist.distribute.tpu_strategy import TPUStrategyV1Alias as TPUStrategy  # noqa: F401
