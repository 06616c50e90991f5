"""``tf.keras``: layers, models, losses, metrics, optimizers on simdist's core (re-exports only).

``Model.compile``/``fit``/``evaluate``/``predict`` and ``tf.keras.callbacks`` train under the
strategy a model was created in; custom training loops work too. ``tf.keras.Input`` and
``tf.keras.Model(inputs, outputs)`` build Functional models. A ``tf.keras`` name that simdist
does not have raises an AttributeError saying it is not yet in simdist (docs/keras.md lists
what there is).
"""

from simdist.keras import activations as activations
from simdist.keras import applications as applications
from simdist.keras import backend as backend
from simdist.keras import callbacks as callbacks
from simdist.keras import constraints as constraints
from simdist.keras import datasets as datasets
from simdist.keras import initializers as initializers
from simdist.keras import layers as layers
from simdist.keras import losses as losses
from simdist.keras import metrics as metrics
from simdist.keras import mixed_precision as mixed_precision
from simdist.keras import models as models
from simdist.keras import optimizers as optimizers
from simdist.keras import preprocessing as preprocessing
from simdist.keras import regularizers as regularizers
from simdist.keras import utils as utils
from simdist.keras._missing import missing_name
from simdist.keras.engine.input_layer import Input as Input
from simdist.keras.engine.sequential import Sequential as Sequential
from simdist.keras.engine.training import Model as Model


def __getattr__(name: str):
    raise missing_name("tf.keras", name)
