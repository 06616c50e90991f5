"""``tf.keras.models``: the model classes, ``load_model``, ``save_model`` (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.engine.sequential import Sequential as Sequential
from simdist.keras.engine.training import Model as Model
from simdist.keras.saving import load_model as load_model
from simdist.keras.saving import save_model as save_model


def __getattr__(name: str):
    raise missing_name("tf.keras.models", name)
