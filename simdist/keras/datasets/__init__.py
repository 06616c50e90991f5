"""``tf.keras.datasets``: loaders that read data sets already on disk (re-exports only)."""

from simdist.keras.datasets import fashion_mnist as fashion_mnist
from simdist.keras.datasets import mnist as mnist
