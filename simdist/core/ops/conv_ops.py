"""2-D convolution (``tf.nn.conv2d``) by im2col and one matrix product, with its gradients.

Forward: the (padded) input's windows are copied into a ``cols`` matrix
``[batch * out_h * out_w, k_h * k_w * in_channels]`` (one strided copy; for one input
channel, one contiguous row per kernel offset, read transposed by BLAS), and one matmul
with the filters reshaped to ``[k_h * k_w * in_channels, out]`` gives the output.
Backward: ``d_filters = cols^T @ dy`` (one matmul, reusing ``cols``); ``d_input`` is
``dy @ filters^T`` scattered back (col2im) by a loop over the kernel offsets, never over
pixels: per offset one ``dy @ filters[i, j]^T`` into a reused buffer and one strided add.
Arithmetic stays in the input dtype: float32 is never upcast. ``fused_ops`` reuses these
kernels for conv + bias + relu in one op.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from simdist import errors
from simdist.core.ops._helpers import as_tensors
from simdist.core.ops._windows import Axis, normalize_pair, offset_slices, pad_hw, resolve_padding
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "conv2d",
    "convolution",
    "conv_geometry",
    "im2col",
    "new_cols",
    "col2im",
    "col2im_add",
]

_FORMATS = ("NHWC", "NCHW")


def new_cols(images: int, h: Axis, w: Axis, channels: int, ones_column: bool, dtype):
    """An empty im2col matrix for ``images`` images, in the layout :func:`im2col` gives:
    ``[N*Ho*Wo, kh*kw*C (+1)]``, C-contiguous, or for one channel the transposed view of a
    C-contiguous ``[kh*kw (+1), N*Ho*Wo]`` (whole rows per kernel offset)."""
    m, k = images * h.out * w.out, h.k * w.k * channels + int(ones_column)
    if channels == 1:
        return np.empty((k, m), dtype=dtype).T
    return np.empty((m, k), dtype=dtype)


def im2col(
    xp: np.ndarray, h: Axis, w: Axis, ones_column: bool = False, out: np.ndarray | None = None
) -> np.ndarray:
    """Windows of the padded NHWC input as an [N*Ho*Wo, kh*kw*C] matrix.

    With ``ones_column``, a last column of ones is appended: ``cols @ [W; b]`` then adds the
    bias inside the matmul, and ``cols^T @ dy`` gives the bias gradient as its last row.
    For one input channel the matrix is the transposed view of a C-contiguous
    ``[kh*kw, N*Ho*Wo]`` array (one copy per kernel offset with whole rows as source);
    otherwise it is C-contiguous (one strided copy of all windows). ``out``: rows of a
    :func:`new_cols` matrix to fill (a block's share of a larger one), returned.
    """
    n, c = xp.shape[0], xp.shape[3]
    k = h.k * w.k * c
    extra = int(ones_column)
    if out is None:
        out = new_cols(n, h, w, c, ones_column, xp.dtype)
    if c == 1:
        cols_t = out.T  # rows of a C-contiguous array: each one contiguous
        for i in range(h.k):
            for j in range(w.k):
                row = cols_t[i * w.k + j].reshape(n, h.out, w.out)
                row[...] = xp[offset_slices(i, j, h, w)][..., 0]
        if extra:
            cols_t[k] = 1
        return out
    sn, sh, sw, sc = xp.strides
    shape6 = (n, h.out, w.out, h.k, w.k, c)
    strides6 = (sn, sh * h.stride, sw * w.stride, sh * h.dilation, sw * w.dilation, sc)
    windows = as_strided(xp, shape6, strides6, writeable=False)
    if extra:
        out[:, k] = 1
    np.copyto(out[:, :k].reshape(shape6), windows)  # a view: the reshape only splits axes
    return out


def col2im(g2: np.ndarray, wv: np.ndarray, n: int, h: Axis, w: Axis) -> np.ndarray:
    """``d_input`` (NHWC) from ``g2 = dy`` as ``[N*Ho*Wo, out]``: per kernel offset, ``dy @
    W[i, j]^T`` added into its window.
    """
    dxp = np.zeros((n, h.padded, w.padded, wv.shape[2]), dtype=g2.dtype)
    col2im_add(dxp, g2, np.ascontiguousarray(wv.transpose(0, 1, 3, 2)), h, w)
    return dxp[:, h.before : h.before + h.size, w.before : w.before + w.size, :]


def col2im_add(dxp: np.ndarray, g2: np.ndarray, wt: np.ndarray, h: Axis, w: Axis) -> None:
    """Add into the padded ``dxp`` the input gradient of ``g2 = dy`` (``[n*Ho*Wo, out]``).

    ``wt`` is the filter as ``[kh, kw, out, in]`` (C-contiguous). One matmul per kernel
    offset fills a reused contiguous block, then one add puts it in its window.
    """
    n, c = dxp.shape[0], wt.shape[3]
    if h.stride == 1 and w.stride == 1 and dxp.flags.c_contiguous:
        _col2im_add_rows(dxp, g2, wt, h, w)
        return
    buf = np.empty((g2.shape[0], c), dtype=g2.dtype)
    block = buf.reshape(n, h.out, w.out, c)
    for i in range(h.k):
        for j in range(w.k):
            np.matmul(g2, wt[i, j], out=buf)
            dxp[offset_slices(i, j, h, w)] += block


def _col2im_add_rows(dxp: np.ndarray, g2: np.ndarray, wt: np.ndarray, h: Axis, w: Axis) -> None:
    """``col2im_add`` for stride 1, with every add over long contiguous runs.

    ``dy`` is laid out on the padded input's width (zeros past ``out_w``), so an image's
    rows are one flat run, and kernel offset ``(i, j)`` adds to the run of ``dxp`` shifted
    by ``i * dilation * padded_w + j * dilation`` pixels: per image one contiguous add
    instead of one per output row (NumPy's per-run cost dominates short runs).
    """
    n, c, out_c = dxp.shape[0], wt.shape[3], wt.shape[2]
    width = w.padded
    wide = np.zeros((n, h.out, width, out_c), dtype=g2.dtype)
    wide[:, :, : w.out] = g2.reshape(n, h.out, w.out, out_c)
    wide2 = wide.reshape(n * h.out * width, out_c)
    span = (h.out - 1) * width + w.out  # the last row's padding columns are not needed
    buf = np.empty((wide2.shape[0], c), dtype=g2.dtype)
    block = buf.reshape(n, h.out * width, c)[:, :span]
    flat = dxp.reshape(n, h.padded * width, c)
    for i in range(h.k):
        for j in range(w.k):
            shift = i * h.dilation * width + j * w.dilation
            np.matmul(wide2, wt[i, j], out=buf)
            flat[:, shift : shift + span] += block


def conv2d_nhwc(
    xv: np.ndarray, wv: np.ndarray, h: Axis, w: Axis
) -> tuple[np.ndarray, object, object]:
    """Convolve NHWC ``xv`` with HWIO ``wv``; returns ``(y, grad_input, grad_filter)``."""
    n, c, out_c = xv.shape[0], xv.shape[3], wv.shape[3]
    cols = im2col(pad_hw(xv, h, w), h, w)
    wm = wv.reshape(h.k * w.k * c, out_c)
    y = np.matmul(cols, wm).reshape(n, h.out, w.out, out_c)

    def grad_input(g: np.ndarray) -> np.ndarray:
        return col2im(g.reshape(-1, out_c), wv, n, h, w)

    def grad_filter(g: np.ndarray) -> np.ndarray:
        return np.matmul(cols.T, g.reshape(-1, out_c)).reshape(wv.shape)

    return y, grad_input, grad_filter


def _check_shapes(xs: tuple[int, ...], ws: tuple[int, ...]) -> None:
    if len(xs) < 4:
        raise errors.InvalidArgumentError(
            f"conv2d input must be 4-dimensional [batch, height, width, channels] (more "
            f"leading batch dimensions allowed), got shape {list(xs)}."
        )
    if len(ws) != 4:
        raise errors.InvalidArgumentError(
            "conv2d filters must be 4-dimensional [filter_height, filter_width, in_channels, "
            f"out_channels], got shape {list(ws)}."
        )


def conv_geometry(
    x: Tensor, f: Tensor, strides, padding, data_format: str, dilations
) -> tuple[np.ndarray, Axis, Axis]:
    """Check a convolution's inputs; returns ``(x as NHWC 4-D, height axis, width axis)``.

    Raises:
        InvalidArgumentError: bad ranks or dtype, a channel mismatch, a bad padding, or a
            window larger than the padded input.
        ValueError: ``strides``/``dilations`` of a bad length.
    """
    if x.dtype.is_bool or not (x.dtype.is_floating or x.dtype.is_integer):
        raise errors.InvalidArgumentError(f"Conv2D does not support dtype {x.dtype.name}.")
    xv, wv = x._value, f._value
    _check_shapes(xv.shape, wv.shape)
    nchw = data_format == "NCHW"
    if nchw and xv.ndim != 4:
        raise errors.InvalidArgumentError(
            f"conv2d with NCHW needs a 4-dimensional input, got shape {list(xv.shape)}."
        )
    x4 = xv.transpose(0, 2, 3, 1) if nchw else xv.reshape((-1,) + xv.shape[-3:])
    kh, kw, in_c, out_c = wv.shape
    if x4.shape[3] != in_c:
        raise errors.InvalidArgumentError(
            f"input depth {x4.shape[3]} must equal filter in_channels {in_c}: input shape "
            f"{list(xv.shape)}, filters shape {list(wv.shape)} (filters are [height, width, "
            "in_channels, out_channels]; grouped convolutions are not supported)."
        )
    stride_hw = normalize_pair(strides, "strides", data_format)
    dilation_hw = normalize_pair(1 if dilations is None else dilations, "dilations", data_format)
    h, w = resolve_padding(padding, x4.shape[1:3], (kh, kw), stride_hw, dilation_hw, data_format)
    return np.ascontiguousarray(x4), h, w


def conv2d(
    input,
    filters,
    strides,
    padding,
    data_format: str = "NHWC",
    dilations=None,
    name=None,
) -> Tensor:
    """2-D convolution (cross-correlation, as TF) of ``input`` with ``filters``.

    Args:
        input: ``[batch..., height, width, in_channels]`` (NHWC) or
            ``[batch, in_channels, height, width]`` (NCHW).
        filters: ``[filter_height, filter_width, in_channels, out_channels]``.
        strides: an int, or a list of 1, 2 or 4 ints (see ``_windows``).
        padding: ``"SAME"``, ``"VALID"``, or 4 explicit ``[before, after]`` pairs.
        data_format: ``"NHWC"`` (default) or ``"NCHW"``.
        dilations: an int or list like ``strides`` (default 1).

    Returns:
        The output, ``[batch..., out_height, out_width, out_channels]`` in NHWC.

    Raises:
        InvalidArgumentError: bad ranks, a channel mismatch, different dtypes, a bad
            padding, or a window larger than the padded input.
        ValueError: a bad ``data_format``, or ``strides``/``dilations`` of a bad length.
    """
    if data_format not in _FORMATS:
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}.")
    x, f = as_tensors("Conv2D", input, filters)
    xv, wv = x._value, f._value
    nchw = data_format == "NCHW"
    lead = xv.shape[:-3]
    x4, h, w = conv_geometry(x, f, strides, padding, data_format, dilations)
    y4, grad_input, grad_filter = conv2d_nhwc(x4, wv, h, w)
    if nchw:
        yv = np.ascontiguousarray(y4.transpose(0, 3, 1, 2))
    else:
        yv = y4.reshape(lead + y4.shape[1:])
    out = make_tensor(yv, x.dtype)

    def to_nhwc(g: np.ndarray) -> np.ndarray:
        return g.transpose(0, 2, 3, 1) if nchw else g.reshape((-1,) + g.shape[-3:])

    def grad_x(g: np.ndarray) -> np.ndarray:
        dx4 = grad_input(np.ascontiguousarray(to_nhwc(g)))
        return dx4.transpose(0, 3, 1, 2) if nchw else dx4.reshape(xv.shape)

    def grad_f(g: np.ndarray) -> np.ndarray:
        return grad_filter(np.ascontiguousarray(to_nhwc(g)))

    record("Conv2D", [x, f], [out], [grad_x, grad_f])
    return out


def convolution(
    input,
    filters,
    strides=None,
    padding="VALID",
    data_format=None,
    dilations=None,
    name=None,
) -> Tensor:
    """``tf.nn.convolution`` for the 2-D case (4-D inputs); other ranks are not supported.

    Raises:
        UnimplementedError: an input that is not 4-D.
    """
    (x,) = as_tensors("Conv2D", input)
    rank = x._value.ndim
    if rank != 4:
        raise errors.UnimplementedError(
            f"simdist's convolution supports 2-D convolution (4-D inputs) only, got rank {rank}."
        )
    return conv2d(
        x,
        filters,
        1 if strides is None else strides,
        padding,
        data_format or "NHWC",
        dilations,
        name,
    )
