"""``tf.config``: execution settings. (Virtual devices arrive with the strategies issue.)"""

from simdist.core.function import functions_run_eagerly as functions_run_eagerly
from simdist.core.function import run_functions_eagerly as run_functions_eagerly
