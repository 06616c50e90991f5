"""``tf.keras.utils.set_random_seed``: one seed for Python, NumPy and simdist."""

from __future__ import annotations

import random

import numpy as np

__all__ = ["set_random_seed"]


def set_random_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy's global generator and ``tf.random`` (as Keras 2).

    simdist's own random ops follow ``tf.random.set_seed(seed)``; the NumPy and Python
    seeds are for the user's code (Keras 2 sets all three).

    Raises:
        ValueError: a seed that is not an int.
    """
    if not isinstance(seed, int):
        raise ValueError(
            f"Expected `seed` argument to be an integer. Received: seed={seed} "
            f"(of type {type(seed)})"
        )
    from simdist.core.random import set_seed

    random.seed(seed)
    np.random.seed(seed)
    set_seed(seed)
