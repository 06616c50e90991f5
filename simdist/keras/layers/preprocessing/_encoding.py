"""Indices to dense columns: ``one_hot``, ``multi_hot``, ``count`` (float32), as Keras 2.

``one_hot`` gives each index its own row (an input of shape ``[batch]`` or ``[batch, 1]``
becomes ``[batch, depth]``; higher ranks gain a last axis). ``multi_hot`` and ``count`` fold
the last axis: a ``[batch, k]`` input becomes ``[batch, depth]`` (a rank-1 input is ONE
sample). Index ``-1`` (a mask) adds nothing.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor

__all__ = ["encode"]


def encode(indices: np.ndarray, depth: int, mode: str, weights=None, name: str = "") -> Tensor:
    """Dense encoding of integer ``indices`` in ``[-1, depth)``.

    Raises:
        InvalidArgumentError: an index outside ``[0, depth)`` (other than the mask's -1).
    """
    indices = np.asarray(indices, dtype=np.int64)
    bad = (indices >= depth) | (indices < -1)
    if np.any(bad):
        value = int(indices[bad][0])
        raise errors.InvalidArgumentError(
            f"{name}: input values must be in the range 0 <= values < num_tokens with "
            f"num_tokens={depth}; found {value}."
        )
    if mode == "one_hot":
        if indices.ndim >= 1 and indices.shape[-1] == 1 and indices.ndim > 1:
            indices = indices[..., 0]
        if indices.ndim > 1:
            raise ValueError(
                "When output_mode is not `'int'`, maximum supported output rank is 2. "
                f"Received output_mode one_hot and input shape {indices.shape}, which would "
                f"result in output rank {indices.ndim + 1}."
            )
        out = np.zeros((*indices.shape, depth), np.float32)
        hit = indices >= 0
        np.put_along_axis(
            out, np.where(hit, indices, 0)[..., None], hit[..., None].astype(np.float32), axis=-1
        )
        return convert_to_tensor(out)
    if indices.ndim > 2:
        raise ValueError(
            "When output_mode is not `'int'`, maximum supported output rank is 2. Received "
            f"output_mode {mode} and input shape {indices.shape}, which would result in "
            f"output rank {indices.ndim}."
        )
    rows = indices if indices.ndim >= 2 else indices[None, :]
    w = None if weights is None else np.asarray(weights, np.float64)
    if w is not None and indices.ndim < 2:
        w = w[None, :]
    out = np.zeros((*rows.shape[:-1], depth), np.float64)
    flat_rows = rows.reshape(-1, rows.shape[-1])
    flat_out = out.reshape(-1, depth)
    flat_w = None if w is None else w.reshape(-1, rows.shape[-1])
    for r in range(flat_rows.shape[0]):
        for c in range(flat_rows.shape[1]):
            index = flat_rows[r, c]
            if index < 0:
                continue
            if mode == "multi_hot":
                flat_out[r, index] = 1.0
            else:
                flat_out[r, index] += 1.0 if flat_w is None else flat_w[r, c]
    out = flat_out.reshape(out.shape)
    if indices.ndim < 2:
        out = out[0]
    return convert_to_tensor(out.astype(np.float32))
