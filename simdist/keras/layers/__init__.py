"""``tf.keras.layers``: the layer classes (re-exports only)."""

from simdist.keras.engine.base_layer import Layer as Layer
from simdist.keras.engine.input_layer import InputLayer as InputLayer
from simdist.keras.layers.convolutional import Conv2D as Conv2D
from simdist.keras.layers.core import Activation as Activation
from simdist.keras.layers.core import Dense as Dense
from simdist.keras.layers.core import Dropout as Dropout
from simdist.keras.layers.core import Flatten as Flatten
from simdist.keras.layers.core import ReLU as ReLU
from simdist.keras.layers.pooling import AveragePooling2D as AveragePooling2D
from simdist.keras.layers.pooling import AvgPool2D as AvgPool2D
from simdist.keras.layers.pooling import MaxPool2D as MaxPool2D
from simdist.keras.layers.pooling import MaxPooling2D as MaxPooling2D

Convolution2D = Conv2D

# registers the built-in layers' compute descriptions (simdist.core.compute_description)
from simdist.keras.layers import compute_rules as _compute_rules  # noqa: E402, F401
