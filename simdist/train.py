"""``tf.train``: checkpoints and the ``Example`` messages (re-exports only; the implementations
are ``simdist.checkpoint`` and ``simdist.data.example``)."""

from simdist.checkpoint import Checkpoint as Checkpoint
from simdist.checkpoint import CheckpointManager as CheckpointManager
from simdist.checkpoint import CheckpointOptions as CheckpointOptions
from simdist.checkpoint import CheckpointReader as CheckpointReader
from simdist.checkpoint import get_checkpoint_state as get_checkpoint_state
from simdist.checkpoint import latest_checkpoint as latest_checkpoint
from simdist.checkpoint import list_variables as list_variables
from simdist.checkpoint import load_checkpoint as load_checkpoint
from simdist.checkpoint import load_variable as load_variable
from simdist.data.example import BytesList as BytesList
from simdist.data.example import Example as Example
from simdist.data.example import Feature as Feature
from simdist.data.example import FeatureList as FeatureList
from simdist.data.example import FeatureLists as FeatureLists
from simdist.data.example import Features as Features
from simdist.data.example import FloatList as FloatList
from simdist.data.example import Int64List as Int64List
from simdist.data.example import SequenceExample as SequenceExample
from simdist.distribute.cluster_resolver import ClusterSpec as ClusterSpec
from simdist.distribute.moving_averages import (
    ExponentialMovingAverage as ExponentialMovingAverage,
)
