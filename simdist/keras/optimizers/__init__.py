"""``tf.keras.optimizers``: the optimizers, learning-rate schedules, ``get``/``serialize``.

Names resolve as Keras 2 resolves them: case-insensitively for the built-in optimizers
(``'rmsprop'``, ``'Adam'``), or a ``{'class_name': ..., 'config': ...}`` dict.
"""

from simdist.keras.object_registration import with_custom_objects
from simdist.keras.optimizers import experimental as experimental
from simdist.keras.optimizers import legacy as legacy
from simdist.keras.optimizers import schedules as schedules
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
from simdist.keras.serialization import object_config

_BY_NAME = {
    cls.__name__.lower(): cls
    for cls in (SGD, Adam, AdamW, Adamax, Adagrad, Adadelta, Ftrl, Nadam, RMSprop)
}
_NOT_YET = ("adafactor", "lion")


def serialize(optimizer: Optimizer) -> dict:
    """``{'module', 'class_name', 'config', 'registered_name'}`` as Keras 2 writes it."""
    return object_config(optimizer, "keras.optimizers")


def deserialize(config: dict, custom_objects=None) -> Optimizer:
    """An optimizer from :func:`serialize`'s dict.

    Raises:
        ValueError: an unknown class name (pass custom classes in ``custom_objects``).
    """
    name = str(config.get("class_name", ""))
    custom = with_custom_objects(custom_objects)
    cls = custom.get(name) or _BY_NAME.get(name.lower())
    if cls is None and name.lower() in ("lossscaleoptimizer", "lossscaleoptimizerv3"):
        from simdist.keras.mixed_precision import LossScaleOptimizer

        return LossScaleOptimizer.from_config(config.get("config") or {}, custom_objects)
    if cls is None:
        hint = " It is not yet in simdist." if name.lower() in _NOT_YET else ""
        raise ValueError(
            f"Could not interpret optimizer identifier {name!r}: Unknown optimizer: "
            f"{name!r}.{hint} Use one of {sorted(_BY_NAME)}, or pass the "
            "class in `custom_objects`."
        )
    return cls.from_config(config.get("config") or {})


def get(identifier, custom_objects=None) -> Optimizer:
    """An optimizer from an instance, a name (``'adam'``) or a config dict.

    Raises:
        ValueError: the identifier names no optimizer, or is of another kind.
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier, custom_objects)
    if isinstance(identifier, str):
        return deserialize({"class_name": identifier, "config": {}}, custom_objects)
    raise ValueError(
        f"Could not interpret optimizer identifier: {identifier!r}; pass an optimizer "
        f"instance, one of {sorted(_BY_NAME)}, or a config dict."
    )
