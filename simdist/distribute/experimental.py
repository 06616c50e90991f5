"""``tf.distribute.experimental``: the strategies TF still files as experimental."""

from simdist.distribute.central_storage_strategy import (
    CentralStorageStrategy as CentralStorageStrategy,
)
from simdist.distribute.input_context import ValueContext as ValueContext
