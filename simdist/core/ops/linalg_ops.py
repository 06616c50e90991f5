"""Matrix ops of ``tf.linalg``: ``matvec``, ``inv``, ``cholesky``, ``diag``, ``diag_part``,
``band_part``, ``l2_normalize``; each batched over leading dimensions, with its gradient.

Gradients: ``inv``'s is ``-A^-T g A^-T``; ``cholesky``'s is TF's (Murray 2016):
``sym(L^-T Phi(L^T g) L^-1)`` with ``Phi`` the lower triangle, diagonal halved, so only the
lower triangle of the input is read and the gradient is symmetric. ``diag`` and
``diag_part`` move one diagonal (``k``, a single integer here) in and out of a matrix;
``band_part`` keeps a band and its gradient is the same mask. ``matvec`` and
``l2_normalize`` are built from ``matmul``, ``reduce_sum`` and ``rsqrt``, so their gradients
follow from those ops'.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import array_ops, math_ops
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["matvec", "inv", "cholesky", "diag", "diag_part", "band_part", "l2_normalize"]


def _float_matrix(x, op: str) -> Tensor:
    x = convert_to_tensor(x)
    if not x._dtype.is_floating:
        raise errors.InvalidArgumentError(
            f"Value for attr 'T' of {x._dtype.name} is not in the list of allowed values: "
            f"double, float, half [Op:{op}]; tf.cast the matrix to a float dtype."
        )
    shape = x._value.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise errors.InvalidArgumentError(
            f"Input matrix must be square. [Op:{op}] (got shape {list(shape)})"
        )
    return x


def _mT(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None) -> Tensor:  # fmt: skip
    """``a @ b`` for matrices ``a [..., M, N]`` and vectors ``b [..., N]``: ``[..., M]``.

    Raises:
        InvalidArgumentError: as ``matmul`` (sizes that do not match).
    """
    column = array_ops.expand_dims(b, -1)
    product = math_ops.matmul(a, column, transpose_a=transpose_a or adjoint_a)
    return array_ops.squeeze(product, axis=-1)


def inv(input, adjoint=False, name=None) -> Tensor:
    """The inverse of each square matrix (of its adjoint with ``adjoint=True``).

    Raises:
        InvalidArgumentError: a matrix that is not square, not invertible, or not float.
    """
    x = _float_matrix(input, "MatrixInverse")
    xv = _mT(x._value) if adjoint else x._value
    try:
        yv = np.linalg.inv(xv)
    except np.linalg.LinAlgError:
        raise errors.InvalidArgumentError("Input is not invertible. [Op:MatrixInverse]") from None
    out = make_tensor(yv.astype(xv.dtype), x._dtype)
    yv = out._value

    def grad(g):
        d = -np.matmul(np.matmul(_mT(yv), g), _mT(yv))
        return _mT(d) if adjoint else d

    record("MatrixInverse", [x], [out], [grad])
    return out


def cholesky(input, name=None) -> Tensor:
    """The lower-triangular ``L`` with ``L L^T = input`` (only its lower triangle is read).

    A matrix that is not positive definite gives NaN in the lower triangle, as TF's CPU
    kernel does (it raises nothing).

    Raises:
        InvalidArgumentError: a matrix that is not square, or not float.
    """
    x = _float_matrix(input, "Cholesky")
    xv = x._value
    n = xv.shape[-1]
    lower = np.tril(xv) + _mT(np.tril(xv, -1))  # the symmetric matrix its lower triangle says
    batch = lower.reshape((-1, n, n))
    result = np.zeros_like(batch)
    for i, matrix in enumerate(batch):
        try:
            result[i] = np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            result[i] = np.tril(np.full((n, n), np.nan, xv.dtype))
    out = make_tensor(result.reshape(xv.shape), x._dtype)
    lv = out._value

    def grad(g):
        l_inv = np.linalg.inv(lv)
        middle = np.matmul(_mT(lv), g)
        middle = np.tril(middle) - 0.5 * np.eye(n, dtype=g.dtype) * middle
        d = np.matmul(np.matmul(_mT(l_inv), middle), l_inv)
        return (0.5 * (d + _mT(d))).astype(g.dtype)

    record("Cholesky", [x], [out], [grad])
    return out


def _diag_offset(k) -> int:
    values = np.asarray(convert_to_tensor(k)._value).reshape(-1)
    if values.size != 1:
        raise NotImplementedError(
            "simdist's diag and diag_part take one diagonal (an integer k); a band of "
            "diagonals (k=(low, high)) is not supported."
        )
    return int(values[0])


def _diag_index(rows: int, cols: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of diagonal ``k`` of a ``rows x cols`` matrix."""
    length = max(0, min(rows + min(k, 0), cols - max(k, 0)))
    start = np.arange(length)
    return start - min(k, 0), start + max(k, 0)


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT") -> Tensor:  # fmt: skip
    """Matrices with ``diagonal`` (``[..., N]``) on diagonal ``k`` and ``padding_value``
    elsewhere; square ``N + |k|`` unless ``num_rows``/``num_cols`` say otherwise.

    Raises:
        InvalidArgumentError: a scalar ``diagonal``.
    """
    d = convert_to_tensor(diagonal)
    dv = d._value
    if dv.ndim < 1:
        raise errors.InvalidArgumentError(
            f"diagonal must be at least 1-dim, received shape: {list(dv.shape)} [Op:MatrixDiagV3]"
        )
    k = _diag_offset(k)
    n = dv.shape[-1]
    rows, cols = int(num_rows), int(num_cols)
    min_rows, min_cols = n - min(k, 0), n + max(k, 0)  # TF's kernel's rule
    if rows < 0 and cols < 0:
        rows = cols = max(min_rows, min_cols)
    elif rows < 0:
        rows = min_rows
    elif cols < 0:
        cols = min_cols
    r, c = _diag_index(rows, cols, k)
    if r.size != n or not (rows == min_rows or cols == min_cols):
        raise errors.InvalidArgumentError(
            "The number of rows or columns is not consistent with the specified d_lower, "
            f"d_upper, and diagonal [Op:MatrixDiagV3]: a diagonal of length {n} on diagonal "
            f"{k} of a {rows} x {cols} matrix."
        )
    pad = convert_to_tensor(padding_value, dtype=d._dtype)._value
    matrix = np.full(dv.shape[:-1] + (rows, cols), pad, dv.dtype)
    matrix[..., r, c] = dv
    out = make_tensor(matrix, d._dtype)
    record("MatrixDiagV3", [d], [out], [lambda g: np.ascontiguousarray(g[..., r, c])])
    return out


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT") -> Tensor:
    """Diagonal ``k`` of each matrix of ``input`` (``[..., M, N]``).

    Raises:
        InvalidArgumentError: ``input`` below rank 2, or ``k`` outside ``(-M, N)``.
    """
    x = convert_to_tensor(input)
    xv = x._value
    if xv.ndim < 2:
        raise errors.InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {list(xv.shape)} [Op:MatrixDiagPartV3]"
        )
    k = _diag_offset(k)
    rows, cols = xv.shape[-2:]
    if not -rows < k < cols and not (rows == 0 or cols == 0):
        raise errors.InvalidArgumentError(
            f"lower_diag_index is out of bound: {k}. It must be between {-rows} and {cols} "
            "[Op:MatrixDiagPartV3]"
        )
    r, c = _diag_index(rows, cols, k)
    out = make_tensor(np.ascontiguousarray(xv[..., r, c]), x._dtype)

    def grad(g):
        dx = np.zeros(xv.shape, g.dtype)
        dx[..., r, c] = g
        return dx

    record("MatrixDiagPartV3", [x], [out], [grad])
    return out


def band_part(input, num_lower, num_upper, name=None) -> Tensor:
    """Each matrix with everything outside its band zeroed: ``num_lower`` subdiagonals and
    ``num_upper`` superdiagonals are kept (a negative count keeps that whole triangle).

    Raises:
        InvalidArgumentError: ``input`` below rank 2, or a count larger than the matrix.
    """
    x = convert_to_tensor(input)
    xv = x._value
    if xv.ndim < 2:
        raise errors.InvalidArgumentError(
            f"input must be at least 2-dim, received shape: {list(xv.shape)} [Op:MatrixBandPart]"
        )
    rows, cols = xv.shape[-2:]
    lower, upper = (
        int(convert_to_tensor(num_lower)._value),
        int(convert_to_tensor(num_upper)._value),
    )
    for what, count, size, dim in [("num_lower", lower, rows, "rows"),
                                   ("num_upper", upper, cols, "columns")]:  # fmt: skip
        if count > size:
            raise errors.InvalidArgumentError(
                f"{what} must be negative or less or equal to number of {dim} ({size}) got: "
                f"{count} [Op:MatrixBandPart]"
            )
    offset = np.arange(rows)[:, None] - np.arange(cols)[None, :]  # row - column
    keep = ((lower < 0) | (offset <= lower)) & ((upper < 0) | (-offset <= upper))
    out = make_tensor(np.where(keep, xv, np.zeros((), xv.dtype)), x._dtype)
    record("MatrixBandPart", [x], [out], [lambda g: np.where(keep, g, 0).astype(g.dtype)])
    return out


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None) -> Tensor:
    """``x / sqrt(max(sum(x**2, axis), epsilon))``: unit L2 norm along ``axis`` (all axes
    when None); an all-zero slice stays zero.

    Raises:
        TypeError: an integer ``x`` (``epsilon`` cannot convert to it, as in TF).
    """
    x = convert_to_tensor(x)
    axis = dim if axis is None else axis
    square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
    floor = convert_to_tensor(epsilon, dtype=x._dtype)
    return math_ops.multiply(x, math_ops.rsqrt(math_ops.maximum(square_sum, floor)))
