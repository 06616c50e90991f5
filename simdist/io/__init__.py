"""``tf.io``: file access (``tf.io.gfile``) for the local file system (re-exports only)."""

from simdist.io import gfile as gfile
