"""``tf.keras.layers.experimental.preprocessing``: the preprocessing layers under their
older names (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.layers.preprocessing.category_encoding import (
    CategoryEncoding as CategoryEncoding,
)
from simdist.keras.layers.preprocessing.discretization import Discretization as Discretization
from simdist.keras.layers.preprocessing.hashing import Hashing as Hashing
from simdist.keras.layers.preprocessing.image_augmentation import RandomContrast as RandomContrast
from simdist.keras.layers.preprocessing.image_augmentation import RandomFlip as RandomFlip
from simdist.keras.layers.preprocessing.image_augmentation import RandomRotation as RandomRotation
from simdist.keras.layers.preprocessing.image_augmentation import (
    RandomTranslation as RandomTranslation,
)
from simdist.keras.layers.preprocessing.image_augmentation import RandomZoom as RandomZoom
from simdist.keras.layers.preprocessing.image_preprocessing import CenterCrop as CenterCrop
from simdist.keras.layers.preprocessing.image_preprocessing import RandomCrop as RandomCrop
from simdist.keras.layers.preprocessing.image_preprocessing import Resizing as Resizing
from simdist.keras.layers.preprocessing.lookup import IntegerLookup as IntegerLookup
from simdist.keras.layers.preprocessing.lookup import StringLookup as StringLookup
from simdist.keras.layers.preprocessing.numeric import Normalization as Normalization
from simdist.keras.layers.preprocessing.numeric import Rescaling as Rescaling
from simdist.keras.layers.preprocessing.text_vectorization import (
    TextVectorization as TextVectorization,
)


def __getattr__(name: str):
    raise missing_name("tf.keras.layers.experimental.preprocessing", name)
