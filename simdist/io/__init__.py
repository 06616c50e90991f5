"""``tf.io``: file access (``tf.io.gfile``) for the local file system and the parsing ops of
input pipelines (re-exports only)."""

from simdist.core.ops.csv_ops import decode_csv as decode_csv
from simdist.io import gfile as gfile
