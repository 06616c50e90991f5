"""``tf.train``: checkpoints (re-exports only; the implementation is ``simdist.checkpoint``)."""

from simdist.checkpoint import Checkpoint as Checkpoint
from simdist.checkpoint import CheckpointManager as CheckpointManager
from simdist.checkpoint import CheckpointOptions as CheckpointOptions
from simdist.checkpoint import CheckpointReader as CheckpointReader
from simdist.checkpoint import get_checkpoint_state as get_checkpoint_state
from simdist.checkpoint import latest_checkpoint as latest_checkpoint
from simdist.checkpoint import list_variables as list_variables
from simdist.checkpoint import load_checkpoint as load_checkpoint
from simdist.checkpoint import load_variable as load_variable
from simdist.distribute.cluster_resolver import ClusterSpec as ClusterSpec
from simdist.distribute.moving_averages import (
    ExponentialMovingAverage as ExponentialMovingAverage,
)
