"""``tf.random.experimental``: stateless seed derivation and the Generator names (re-exports)."""

from simdist.core.random_distributions import stateless_fold_in as stateless_fold_in
from simdist.core.random_distributions import stateless_split as stateless_split
from simdist.core.random_generator import Algorithm as Algorithm
from simdist.core.random_generator import Generator as Generator
from simdist.core.random_generator import get_global_generator as get_global_generator
from simdist.core.random_generator import set_global_generator as set_global_generator
