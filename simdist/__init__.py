"""simdist: tf.distribute semantics on simulated devices, in NumPy. ``import simdist as tf``.

This module is the TF-shaped face: it only re-exports. The implementation lives in
``simdist.core`` (tensors, ops, autodiff), ``simdist.keras``, ``simdist.data``,
``simdist.distribute`` and ``simdist.checkpoint``; simdist's own additions (topologies,
collectives, costs, profiles) gather under ``simdist.sim``.
"""

from simdist import compat as compat
from simdist import config as config
from simdist import data as data
from simdist import distribute as distribute
from simdist import errors as errors
from simdist import io as io
from simdist import keras as keras
from simdist import linalg as linalg
from simdist import math as math
from simdist import nn as nn
from simdist import random as random
from simdist import sim as sim
from simdist import summary as summary
from simdist import tpu as tpu
from simdist import train as train
from simdist.core import *  # noqa: F403 - core's __all__ is the top-level op and type face
from simdist.core import dtypes as dtypes
from simdist.core import nest as nest
from simdist.core.ops.nn_ops import sigmoid as sigmoid
from simdist.core.ops.nn_ops import tanh as tanh
from simdist.keras import losses as losses
from simdist.keras import metrics as metrics
from simdist.keras import optimizers as optimizers
from simdist.version import __version__ as __version__
