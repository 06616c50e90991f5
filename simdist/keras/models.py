"""``tf.keras.models``: the model classes (re-exports only)."""

from simdist.keras.engine.sequential import Sequential as Sequential
from simdist.keras.engine.training import Model as Model
