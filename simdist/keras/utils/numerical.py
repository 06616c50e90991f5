"""``to_categorical`` and ``normalize``: Keras 2's NumPy helpers, with its exact rules."""

from __future__ import annotations

import numpy as np

__all__ = ["to_categorical", "normalize"]


def to_categorical(y, num_classes=None, dtype="float32") -> np.ndarray:
    """Class indices as one-hot rows (a trailing axis of size 1 is dropped first).

    ``num_classes`` defaults to ``max(y) + 1``. As Keras 2, a negative index counts from the
    end (NumPy indexing) and an index ``>= num_classes`` raises IndexError.

    >>> import simdist as tf
    >>> tf.keras.utils.to_categorical([0, 2], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    y = np.array(y, dtype="int")
    input_shape = y.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    y = y.reshape(-1)
    if not num_classes:
        num_classes = np.max(y) + 1
    n = y.shape[0]
    categorical = np.zeros((n, num_classes), dtype=dtype)
    categorical[np.arange(n), y] = 1
    return np.reshape(categorical, input_shape + (num_classes,))


def normalize(x, axis=-1, order=2) -> np.ndarray:
    """``x`` divided by its ``order``-norm along ``axis`` (a zero norm divides by 1)."""
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)
