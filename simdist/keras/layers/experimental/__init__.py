"""``tf.keras.layers.experimental``: ``SyncBatchNormalization``, ``EinsumDense`` and
``preprocessing`` (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.layers.einsum_dense import EinsumDense as EinsumDense
from simdist.keras.layers.experimental import preprocessing as preprocessing
from simdist.keras.layers.sync_batch_norm import SyncBatchNormalization as SyncBatchNormalization


def __getattr__(name: str):
    raise missing_name("tf.keras.layers.experimental", name)
