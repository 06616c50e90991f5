"""``tf.compat``: the TF1 names the distributed-training tutorials still touch (``v1``), and
``v2`` (simdist itself)."""

from simdist.compat import v1 as v1
