"""``tf.keras.layers.experimental.preprocessing``: the preprocessing layers under their
older names (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.layers.preprocessing.category_encoding import (
    CategoryEncoding as CategoryEncoding,
)
from simdist.keras.layers.preprocessing.hashing import Hashing as Hashing
from simdist.keras.layers.preprocessing.lookup import IntegerLookup as IntegerLookup
from simdist.keras.layers.preprocessing.lookup import StringLookup as StringLookup
from simdist.keras.layers.preprocessing.numeric import Normalization as Normalization
from simdist.keras.layers.preprocessing.numeric import Rescaling as Rescaling
from simdist.keras.layers.preprocessing.text_vectorization import (
    TextVectorization as TextVectorization,
)


def __getattr__(name: str):
    raise missing_name("tf.keras.layers.experimental.preprocessing", name)
