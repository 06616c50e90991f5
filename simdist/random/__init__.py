"""``tf.random``: the global seed and seeded random ops (TF's seed rules, deterministic).

This module only re-exports; the ops and the seed rules live in ``simdist.core.random``.
"""

from simdist.core.random import categorical as categorical
from simdist.core.random import normal as normal
from simdist.core.random import set_seed as set_seed
from simdist.core.random import shuffle as shuffle
from simdist.core.random import stateless_normal as stateless_normal
from simdist.core.random import stateless_truncated_normal as stateless_truncated_normal
from simdist.core.random import stateless_uniform as stateless_uniform
from simdist.core.random import truncated_normal as truncated_normal
from simdist.core.random import uniform as uniform
from simdist.core.random_distributions import fold_in as fold_in
from simdist.core.random_distributions import gamma as gamma
from simdist.core.random_distributions import poisson as poisson
from simdist.core.random_distributions import split as split
from simdist.core.random_distributions import stateless_categorical as stateless_categorical
from simdist.core.random_distributions import stateless_gamma as stateless_gamma
from simdist.core.random_distributions import stateless_poisson as stateless_poisson
from simdist.core.random_generator import Algorithm as Algorithm
from simdist.core.random_generator import Generator as Generator
from simdist.core.random_generator import get_global_generator as get_global_generator
from simdist.core.random_generator import set_global_generator as set_global_generator
from simdist.random import experimental as experimental
