"""``tf.keras.utils.experimental``: ``DatasetCreator``."""

from simdist.keras.utils.dataset_creator import DatasetCreator as DatasetCreator

__all__ = ["DatasetCreator"]
