"""The error for a ``tf.keras`` name that simdist does not have (each module's ``__getattr__``).

A name that real ``tf.keras`` has (TF 2.21 + tf_keras, listed in ``_tf_keras_names``) raises
``AttributeError: tf.keras.layers.Conv3D is not yet in simdist ...``; any other name raises
the usual "has no attribute" error, saying that tf.keras has no such name either.
"""

from __future__ import annotations

from simdist.keras._tf_keras_names import TF_KERAS_NAMES

__all__ = ["missing_name"]


def missing_name(module: str, name: str) -> AttributeError:
    """The AttributeError for ``module.name`` (``module`` as TF spells it: ``tf.keras.layers``)."""
    if not name.startswith("_") and name in TF_KERAS_NAMES.get(module, ()):
        return AttributeError(
            f"{module}.{name} is not yet in simdist (module '{module}' has no attribute "
            f"'{name}'). docs/keras.md lists the Keras names simdist has."
        )
    return AttributeError(f"module '{module}' has no attribute '{name}'")
