"""``tf.keras.utils``: Keras 2's helpers (re-exports only).

``Sequence`` feeds ``model.fit``; ``to_categorical`` / ``normalize`` / ``pad_sequences`` are
NumPy helpers; ``timeseries_dataset_from_array`` makes a ``tf.data`` dataset of windows;
``custom_object_scope`` / ``register_keras_serializable`` name custom classes for loading;
``get_file`` only finds files already in Keras's cache and ``plot_model`` is refused (see
``refused``; docs/differences.md).
"""

from simdist.keras._missing import missing_name
from simdist.keras.engine.progbar import Progbar as Progbar
from simdist.keras.object_registration import CustomObjectScope as CustomObjectScope
from simdist.keras.object_registration import custom_object_scope as custom_object_scope
from simdist.keras.object_registration import get_custom_objects as get_custom_objects
from simdist.keras.object_registration import get_registered_name as get_registered_name
from simdist.keras.object_registration import get_registered_object as get_registered_object
from simdist.keras.object_registration import (
    register_keras_serializable as register_keras_serializable,
)
from simdist.keras.utils import experimental as experimental
from simdist.keras.utils.numerical import normalize as normalize
from simdist.keras.utils.numerical import to_categorical as to_categorical
from simdist.keras.utils.padding import pad_sequences as pad_sequences
from simdist.keras.utils.random_seed import set_random_seed as set_random_seed
from simdist.keras.utils.refused import get_file as get_file
from simdist.keras.utils.refused import model_to_dot as model_to_dot
from simdist.keras.utils.refused import plot_model as plot_model
from simdist.keras.utils.sequence import Sequence as Sequence
from simdist.keras.utils.timeseries import (
    timeseries_dataset_from_array as timeseries_dataset_from_array,
)


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """``x``, ``(x, y)`` or ``(x, y, sample_weight)``, as ``fit`` reads a batch."""
    if y is None:
        return x if not isinstance(x, (tuple, list, dict)) else (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """``(x, y, sample_weight)`` of a batch, None for the missing parts."""
    from simdist.keras.engine.data_adapter import unpack

    if isinstance(data, list):
        data = tuple(data)
    return unpack(data)


def __getattr__(name: str):
    raise missing_name("tf.keras.utils", name)
