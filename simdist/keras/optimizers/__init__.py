"""``tf.keras.optimizers``: Optimizer, SGD, Adam, learning-rate schedules, ``get`` by name."""

from simdist.keras.optimizers import schedules as schedules
from simdist.keras.optimizers.adam import Adam as Adam
from simdist.keras.optimizers.optimizer import Optimizer as Optimizer
from simdist.keras.optimizers.sgd import SGD as SGD

_BY_NAME = {"sgd": SGD, "adam": Adam}


def get(identifier):
    """An optimizer from a name (``'adam'``), a config dict, or an optimizer.

    Raises:
        ValueError: the identifier names no optimizer.
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(str(identifier.get("class_name", "")).lower())
        if cls is not None:
            return cls.from_config(identifier.get("config", {}))
    raise ValueError(
        f"Could not interpret optimizer identifier: {identifier!r}; use 'sgd', 'adam' or an "
        "optimizer instance."
    )
