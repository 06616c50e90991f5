"""``tf.keras.preprocessing.sequence``: ``pad_sequences`` (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.utils.padding import pad_sequences as pad_sequences


def __getattr__(name: str):
    raise missing_name("tf.keras.preprocessing.sequence", name)
