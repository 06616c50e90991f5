"""``tf.linalg``: the linear-algebra ops simdist has (re-exports only)."""

from simdist.core.ops.array_ops import transpose as transpose
from simdist.core.ops.clip_ops import global_norm as global_norm
from simdist.core.ops.contraction_ops import tensordot as tensordot
from simdist.core.ops.einsum_ops import einsum as einsum
from simdist.core.ops.grid_ops import eye as eye
from simdist.core.ops.math_ops import matmul as matmul
