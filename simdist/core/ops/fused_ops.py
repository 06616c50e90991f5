"""Fused conv2d / matmul + bias_add + relu, one op each, as TF's grappler fuses Keras layers.

``conv2d_bias_activation`` and ``dense_bias_activation`` compute what ``conv2d`` (or
``matmul``), ``bias_add`` and ``relu`` compute one after the other, as one tape node:

* the batch is cut into blocks of a few images (about ``_CHUNK_ROWS`` output pixels, a
  function of the shapes alone), run on simdist's intra-op threads (``intra_op``): each
  block's result is its own slice, so the bits do not depend on the thread count;
* forward, per half block (two tasks for the threads): the windows (im2col) and one
  matmul, the bias riding inside it (a column of ones in ``cols``, the bias as the filters'
  last row); the relu then runs in place on the matmul's output, so no intermediate array
  is allocated;
* backward: the upstream gradient masked by the relu, then per block two tasks for the
  intra-op threads: the block's filter and bias gradient from one matmul (``cols^T @ dy``:
  the ones column makes the bias gradient its last row) and its input gradient by col2im;
  the filter gradient is the sum of the blocks' matmuls, added in block order
  (deterministic, rounding like a blocked matmul). Where a block has one task (a first
  layer: no input gradient), the task masks its own rows just before its matmul reads them,
  while they are in cache; with two, the batch is masked once before the tasks.

Values equal the unfused ops' up to float rounding (the bias is added inside the matmul's
sum). At the relu's kink the gradient follows ``tf.nn.relu``: none at 0, and
``dy * (y > 0)`` elsewhere. The unfused ops stay as they are; the Keras ``Conv2D`` and
``Dense`` layers call these.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.intra_op import items_per_block, run_blocks
from simdist.core.ops._helpers import as_tensors
from simdist.core.ops._windows import pad_hw
from simdist.core.ops.conv_ops import col2im_add, conv_geometry, im2col, new_cols
from simdist.core.tape import record_joint
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["conv2d_bias_activation", "dense_bias_activation", "ACTIVATIONS"]

ACTIVATIONS = (None, "relu")
_CHUNK_ROWS = 2048  # rows of the conv backward done together: ~256 KiB of gradient
_WEIGHTS, _INPUT = "weights", "input"  # the two gradient tasks of a backward block


def _check_activation(activation) -> None:
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"fused ops support activation None or 'relu', got {activation!r}; apply other "
            "activations after the op."
        )


def _check_bias(op: str, b: Tensor | None, channels: int) -> None:
    if b is None:
        return
    shape = b._value.shape
    if len(shape) != 1 or shape[0] != channels:
        raise errors.InvalidArgumentError(
            f"{op}: bias must be 1-D with one value per output channel ({channels}), got "
            f"shape {list(shape)}."
        )


def _relu_masked(g: np.ndarray, y: np.ndarray, activation) -> np.ndarray:
    """The gradient at the pre-activation: ``g * (y > 0)`` for relu (as ``tf.nn.relu``).

    For a float ``g`` of ``y``'s dtype and shape the mask is written as 0.0/1.0 in ``g``'s
    dtype and multiplied in place: the same bits as ``g * (y > 0)`` (a product by exactly 1
    or 0), without the bool array and its cast (0.56 against 0.80 ms for the tutorial CNN's
    first convolution at batch 64).
    """
    if activation != "relu":
        return g
    if g.dtype.kind == "f" and g.dtype == y.dtype and g.shape == y.shape:
        out = np.empty_like(g)
        np.greater(y, 0, out=out)
        return np.multiply(out, g, out=out)
    return g * (y > 0)


def conv2d_bias_activation(
    input,
    filters,
    bias=None,
    strides=1,
    padding="VALID",
    dilations=None,
    activation: str | None = None,
) -> Tensor:
    """``activation(conv2d(input, filters) + bias)`` (NHWC) as one op.

    Args:
        input: ``[batch..., height, width, in_channels]``.
        filters: ``[filter_height, filter_width, in_channels, out_channels]``.
        bias: ``[out_channels]``, or ``None`` for no bias.
        strides, padding, dilations: as ``tf.nn.conv2d``.
        activation: ``None`` or ``"relu"``.

    Returns:
        ``[batch..., out_height, out_width, out_channels]``.

    Raises:
        InvalidArgumentError: what ``tf.nn.conv2d`` raises, different dtypes, or a bias
            that is not 1-D of ``out_channels`` values.
        ValueError: an unsupported ``activation``, or bad ``strides``/``dilations``.
    """
    _check_activation(activation)
    values = (input, filters) if bias is None else (input, filters, bias)
    tensors = as_tensors("FusedConv2D", *values)
    x, f = tensors[0], tensors[1]
    b = tensors[2] if bias is not None else None
    x4, h, w = conv_geometry(x, f, strides, padding, "NHWC", dilations)
    xv, wv = x._value, f._value
    n, out_c = x4.shape[0], wv.shape[3]
    k = wv.shape[0] * wv.shape[1] * wv.shape[2]
    _check_bias("FusedConv2D", b, out_c)
    wm = wv.reshape(k, out_c)
    if b is not None:
        wm = np.concatenate([wm, b._value.reshape(1, out_c)])
    xp = pad_hw(x4, h, w)
    per_image = h.out * w.out
    step = items_per_block(per_image, _CHUNK_ROWS)  # images per block: shapes alone
    num_blocks = -(-n // step)
    # The batch's im2col, kept for the backward, and each block's rows of it. One input
    # channel makes kh*kw copies of whole image rows: done once for the batch (per block
    # they were hundreds of small NumPy calls); otherwise the forward tasks fill their rows.
    ones = b is not None
    all_cols = new_cols(n, h, w, x4.shape[3], ones, xv.dtype)
    if x4.shape[3] == 1:
        im2col(xp, h, w, ones_column=ones, out=all_cols)
    cols = [all_cols[i * step * per_image : (i + 1) * step * per_image] for i in range(num_blocks)]
    y2 = np.empty((n * per_image, out_c), dtype=xv.dtype)
    # Two forward tasks per block, its images in two halves, so that a batch of one block
    # still keeps two threads busy. They are rows of one matrix product: with one BLAS
    # thread OpenBLAS gives a row the same bits however the rows are cut (the tutorial
    # CNN's weight digests did not move), and the halves are a function of the shapes.
    halves = 2 if step >= 2 else 1
    half = -(-step // halves)

    def forward_task(t: int) -> None:
        i, part = divmod(t, halves)
        first = i * step + part * half
        last = min(n, (i + 1) * step, first + half)
        if first >= last:  # the last block holds too few images for two halves
            return
        block_cols = all_cols[first * per_image : last * per_image]
        if x4.shape[3] != 1:
            im2col(xp[first:last], h, w, ones_column=ones, out=block_cols)
        block = y2[first * per_image : last * per_image]
        np.matmul(block_cols, wm, out=block)
        if activation == "relu":
            np.maximum(block, 0, out=block)

    # Each block's matrix product; a batch smaller than a block is one block of its size.
    block_flops = 2 * min(step, n) * per_image * wm.shape[0] * out_c
    run_blocks(num_blocks * halves, forward_task, block_flops / halves)
    out = make_tensor(y2.reshape(xv.shape[:-3] + (h.out, w.out, out_c)), x.dtype)

    def vjp(wanted, g):
        g2 = g.reshape(-1, out_c)
        want_wb = wanted[1] or (b is not None and wanted[2])
        dxp = np.zeros((n, h.padded, w.padded, xv.shape[-1]), g2.dtype) if wanted[0] else None
        wt = np.ascontiguousarray(wv.transpose(0, 1, 3, 2)) if wanted[0] else None
        parts: list[np.ndarray | None] = [None] * num_blocks
        # Per block two independent tasks, the filter/bias gradient and the input gradient
        # (different outputs, so the same bits whichever thread runs which): a batch of one
        # block still keeps two threads busy.
        tasks = [t for t, want in ((_WEIGHTS, want_wb), (_INPUT, wanted[0])) if want]
        # One task per block: each masks its own rows, in cache for its matmul (the tutorial
        # CNN's first convolution at batch 64: its backward took 4.9-5.2 ms instead of
        # 6.1-6.2, three runs each, old and new in turns).
        masked = _relu_masked(g2, y2, activation) if len(tasks) > 1 else None

        def backward_task(t: int) -> None:
            i, task = divmod(t, len(tasks))
            first, last = i * step, min(n, (i + 1) * step)
            rows = slice(first * per_image, last * per_image)
            gz = _relu_masked(g2[rows], y2[rows], activation) if masked is None else masked[rows]
            if tasks[task] == _WEIGHTS:
                parts[i] = np.matmul(cols[i].T, gz)
            else:
                col2im_add(dxp[first:last], gz, wt, h, w)

        run_blocks(num_blocks * len(tasks), backward_task, block_flops)
        dwb = None
        if want_wb:  # the blocks' sum in block order, whichever thread ran which block
            if num_blocks == 0:  # an empty batch
                dwb = np.zeros((k + int(b is not None), out_c), g2.dtype)
            else:
                dwb = parts[0]
                for part in parts[1:]:
                    np.add(dwb, part, out=dwb)
        dx = df = db = None
        if wanted[0]:
            dx = dxp[:, h.before : h.before + h.size, w.before : w.before + w.size]
            dx = dx.reshape(xv.shape)
        if wanted[1]:
            df = dwb[:k].reshape(wv.shape)
        if b is not None and wanted[2]:
            db = dwb[k]  # the ones column of cols: the bias gradient is the last row
        return (dx, df, db)[: len(tensors)]

    record_joint("FusedConv2D", tensors, [out], vjp)
    return out


def dense_bias_activation(inputs, kernel, bias=None, activation: str | None = None) -> Tensor:
    """``activation(inputs @ kernel + bias)`` for a 2-D ``inputs`` as one op.

    Args:
        inputs: ``[batch, in]``.
        kernel: ``[in, units]``.
        bias: ``[units]``, or ``None``.
        activation: ``None`` or ``"relu"``.

    Raises:
        InvalidArgumentError: inputs or kernel not 2-D, inner sizes that differ, different
            dtypes, or a bias that is not 1-D of ``units`` values.
        ValueError: an unsupported ``activation``.
    """
    _check_activation(activation)
    values = (inputs, kernel) if bias is None else (inputs, kernel, bias)
    tensors = as_tensors("FusedMatMul", *values)
    a, kern = tensors[0], tensors[1]
    b = tensors[2] if bias is not None else None
    av, kv = a._value, kern._value
    if av.ndim != 2 or kv.ndim != 2 or av.shape[1] != kv.shape[0]:
        raise errors.InvalidArgumentError(
            f"FusedMatMul needs [batch, in] inputs and an [in, units] kernel, got shapes "
            f"{list(av.shape)} and {list(kv.shape)}."
        )
    if a.dtype.is_bool or not (a.dtype.is_floating or a.dtype.is_integer):
        raise errors.InvalidArgumentError(f"FusedMatMul does not support dtype {a.dtype.name}.")
    _check_bias("FusedMatMul", b, kv.shape[1])
    y = np.matmul(av, kv)  # a fresh array: bias and relu run in place
    if b is not None:
        np.add(y, b._value, out=y)
    if activation == "relu":
        np.maximum(y, 0, out=y)
    out = make_tensor(y, a.dtype)

    def vjp(wanted, g):
        gm = _relu_masked(g, y, activation)
        da = np.matmul(gm, kv.T) if wanted[0] else None
        dk = _kernel_grad(av, gm) if wanted[1] else None
        db = np.sum(gm, axis=0) if b is not None and wanted[2] else None
        return (da, dk, db)[: len(tensors)]

    record_joint("FusedMatMul", tensors, [out], vjp)
    return out


def _kernel_grad(av: np.ndarray, gm: np.ndarray) -> np.ndarray:
    """``av.T @ gm``, the Dense kernel's gradient.

    For a batch of one row the inner dimension is 1, and NumPy's matmul then skips BLAS for
    its plain C loop, which sets each entry to ``0 + a * b`` (~150 us for a 1600x64
    kernel; an outer product is no faster: NumPy runs one short inner loop per row). A BLAS
    product with the inner dimension padded to 2 by zeros gives each entry
    ``a * b + 0 * 0``, which is that, bit for bit: the exact zero term changes no rounding,
    a ``-0.0`` product plus ``+0.0`` is ``0.0`` as in the loop, and inf * 0 is NaN in both
    (about 5x faster). For the dtypes BLAS does not take, the outer product plus zero is the
    C loop too. ``np.dot`` on the unpadded shapes would be faster still, but its BLAS paths
    skip zero factors for some shapes.
    """
    if av.shape[0] == 1 and av.dtype.char in "fd" and gm.dtype == av.dtype:  # BLAS dtypes
        left = np.zeros((av.shape[1], 2), av.dtype)
        left[:, 0] = av[0]
        right = np.zeros((2, gm.shape[1]), gm.dtype)
        right[0] = gm[0]
        return np.matmul(left, right)
    if av.shape[0] == 1:  # float16, integers: the outer product plus zero is the C loop
        out = np.multiply.outer(av[0], gm[0])
        return np.add(out, 0, out=out)
    return np.matmul(av.T, gm)
