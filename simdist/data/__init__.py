"""tf.data on simdist: Dataset, its transformations, options and file sources (re-exports).

``import simdist as tf`` then ``tf.data.Dataset``, ``tf.data.Options``,
``tf.data.experimental.AutoShardPolicy``... The implementation is in the modules of this
package; see ``simdist.data.dataset`` for how a pipeline is represented.
"""

from simdist.data import experimental as experimental
from simdist.data.dataset import INFINITE as INFINITE_CARDINALITY
from simdist.data.dataset import UNKNOWN as UNKNOWN_CARDINALITY
from simdist.data.dataset import Dataset as Dataset
from simdist.data.dataset_spec import DatasetSpec as DatasetSpec
from simdist.data.files import TextLineDataset as TextLineDataset
from simdist.data.iterator import Iterator as Iterator
from simdist.data.options import AUTOTUNE as AUTOTUNE
from simdist.data.options import Options as Options
from simdist.data.options import ThreadingOptions as ThreadingOptions
from simdist.data.tfrecord import TFRecordDataset as TFRecordDataset

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "DatasetSpec",
    "Iterator",
    "Options",
    "TFRecordDataset",
    "TextLineDataset",
    "ThreadingOptions",
    "experimental",
]
