"""``tf.keras.optimizers.experimental``: the optimizers under their Keras 2.11 names, the
same classes as ``tf.keras.optimizers`` (re-exports only)."""

from simdist.keras._missing import missing_name
from simdist.keras.optimizers.adadelta import Adadelta as Adadelta
from simdist.keras.optimizers.adagrad import Adagrad as Adagrad
from simdist.keras.optimizers.adam import Adam as Adam
from simdist.keras.optimizers.adamax import Adamax as Adamax
from simdist.keras.optimizers.adamw import AdamW as AdamW
from simdist.keras.optimizers.ftrl import Ftrl as Ftrl
from simdist.keras.optimizers.nadam import Nadam as Nadam
from simdist.keras.optimizers.optimizer import Optimizer as Optimizer
from simdist.keras.optimizers.rmsprop import RMSprop as RMSprop
from simdist.keras.optimizers.sgd import SGD as SGD


def __getattr__(name: str):
    raise missing_name("tf.keras.optimizers.experimental", name)
