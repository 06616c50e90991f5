"""``tf.linalg``: the linear-algebra ops simdist has (re-exports only)."""

from simdist import symbolic_dispatch as _symbolic_dispatch
from simdist.core.ops.array_ops import transpose as transpose
from simdist.core.ops.clip_ops import global_norm as global_norm
from simdist.core.ops.contraction_ops import tensordot as tensordot
from simdist.core.ops.einsum_ops import einsum as einsum
from simdist.core.ops.grid_ops import eye as eye
from simdist.core.ops.linalg_ops import band_part as band_part
from simdist.core.ops.linalg_ops import cholesky as cholesky
from simdist.core.ops.linalg_ops import diag as diag
from simdist.core.ops.linalg_ops import diag_part as diag_part
from simdist.core.ops.linalg_ops import inv as inv
from simdist.core.ops.linalg_ops import l2_normalize as l2_normalize
from simdist.core.ops.linalg_ops import matvec as matvec
from simdist.core.ops.math_ops import matmul as matmul

_symbolic_dispatch.install(globals(), "linalg")  # on KerasTensors the ops make Keras op layers
