"""``tf.sparse``: ``SparseTensor`` and its dense conversions (re-exports only; the
implementation is ``simdist.core.sparse``)."""

from simdist.core.sparse import SparseTensor as SparseTensor
from simdist.core.sparse import from_dense as from_dense
from simdist.core.sparse import to_dense as to_dense
