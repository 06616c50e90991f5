"""``tf.keras``: layers, models, losses, metrics, optimizers on simdist's core (re-exports only).

``Model.compile``/``fit``/``evaluate``/``predict`` and ``tf.keras.callbacks`` train under the
strategy a model was created in; custom training loops work too.
"""

from simdist.keras import activations as activations
from simdist.keras import backend as backend
from simdist.keras import callbacks as callbacks
from simdist.keras import constraints as constraints
from simdist.keras import datasets as datasets
from simdist.keras import initializers as initializers
from simdist.keras import layers as layers
from simdist.keras import losses as losses
from simdist.keras import metrics as metrics
from simdist.keras import models as models
from simdist.keras import optimizers as optimizers
from simdist.keras import regularizers as regularizers
from simdist.keras.engine.sequential import Sequential as Sequential
from simdist.keras.engine.training import Model as Model
