"""``tf.keras.preprocessing``: Keras 2's older home of the data helpers (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.preprocessing import sequence as sequence
from simdist.keras.utils.timeseries import (
    timeseries_dataset_from_array as timeseries_dataset_from_array,
)


def __getattr__(name: str):
    raise missing_name("tf.keras.preprocessing", name)
