"""``tf.summary``: TensorBoard event files (scalars, histograms, text) without TensorFlow.

The files are TFRecord files of ``Event`` protocol buffers, written byte for byte in
TensorFlow's format (see :mod:`simdist.summary.event_file`), so TensorBoard and
``tf.compat.v1.train.summary_iterator`` read them. The Keras ``TensorBoard`` callback writes
through the same writers.
"""

from types import SimpleNamespace as _Namespace

from simdist.summary.writer import SummaryWriter as SummaryWriter
from simdist.summary.writer import create_file_writer as create_file_writer
from simdist.summary.writer import create_noop_writer as create_noop_writer
from simdist.summary.writer import flush as flush
from simdist.summary.writer import get_step as _get_step
from simdist.summary.writer import histogram as histogram
from simdist.summary.writer import record_if as record_if
from simdist.summary.writer import scalar as scalar
from simdist.summary.writer import set_step as _set_step
from simdist.summary.writer import should_record_summaries as should_record_summaries
from simdist.summary.writer import text as text
from simdist.summary.writer import write as write

experimental = _Namespace(get_step=_get_step, set_step=_set_step)
