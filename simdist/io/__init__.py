"""``tf.io``: file access (``tf.io.gfile``), TFRecord files, CSV and ``Example`` parsing and
tensor serialization (re-exports only; the implementations are in ``simdist.data`` and
``simdist.core.ops``)."""

from simdist.core.ops.csv_ops import decode_csv as decode_csv
from simdist.data.parsing import parse_example as parse_example
from simdist.data.parsing import parse_single_example as parse_single_example
from simdist.data.parsing_config import FixedLenFeature as FixedLenFeature
from simdist.data.parsing_config import FixedLenSequenceFeature as FixedLenSequenceFeature
from simdist.data.parsing_config import VarLenFeature as VarLenFeature
from simdist.data.sequence_parsing import (
    parse_single_sequence_example as parse_single_sequence_example,
)
from simdist.data.tensor_io import decode_raw as decode_raw
from simdist.data.tensor_io import parse_tensor as parse_tensor
from simdist.data.tensor_io import serialize_tensor as serialize_tensor
from simdist.data.tfrecord import TFRecordOptions as TFRecordOptions
from simdist.data.tfrecord import TFRecordWriter as TFRecordWriter
from simdist.io import gfile as gfile
