"""``tf.keras``: layers, models, losses, metrics, optimizers on simdist's core (re-exports only).

``compile``/``fit`` are not here yet; custom training loops (GradientTape + an optimizer's
``apply_gradients``) work.
"""

from simdist.keras import activations as activations
from simdist.keras import backend as backend
from simdist.keras import initializers as initializers
from simdist.keras import layers as layers
from simdist.keras import losses as losses
from simdist.keras import metrics as metrics
from simdist.keras import models as models
from simdist.keras import optimizers as optimizers
from simdist.keras.engine.sequential import Sequential as Sequential
from simdist.keras.engine.training import Model as Model
