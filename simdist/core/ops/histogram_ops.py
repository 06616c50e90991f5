"""Counting: ``bincount``, ``confusion_matrix``, ``histogram_fixed_width``.

Weighted counts add the weights of a bin in input order (``np.add.at`` is sequential), so
results are deterministic. None of these ops has a gradient (TF registers none): their
outputs are counts.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["bincount", "confusion_matrix", "histogram_fixed_width"]


def _int_values(values, what: str) -> np.ndarray:
    t = convert_to_tensor(values)
    if t._dtype.is_floating:  # TF casts float input to int32 (truncating)
        return t._value.astype(np.int32)
    if not t._dtype.is_integer:
        raise errors.InvalidArgumentError(f"{what} must be integers, got {t._dtype.name}.")
    return t._value.astype(np.int64)


def bincount(
    arr,
    weights=None,
    minlength=None,
    maxlength=None,
    dtype=dtypes.int32,
    name=None,
    axis=None,
    binary_output=False,
) -> Tensor:
    """How many times each value ``0 .. max(arr)`` occurs in ``arr`` (or the sum of the
    ``weights`` at its positions); ``axis=-1`` counts each row of a 2-D ``arr`` alone.

    The output has ``max(max(arr) + 1, minlength)`` bins, cut to ``maxlength``; values at or
    past the last bin are dropped. Unweighted counts are ``dtype``; weighted sums take the
    weights' dtype. ``binary_output`` records presence (1) instead of counts.

    >>> import simdist as tf
    >>> tf.math.bincount([1, 1, 3]).numpy()
    array([0, 2, 0, 1], dtype=int32)

    Raises:
        InvalidArgumentError: a negative value, weights of another shape, or ``axis`` other
            than 0, -1 or None.
    """
    values = _int_values(arr, "arr")
    if values.size and values.min() < 0:
        raise errors.InvalidArgumentError("Input arr must be non-negative! [Op:DenseBincount]")
    if axis not in (None, 0, -1):
        raise errors.InvalidArgumentError(
            f"Unsupported axis value {axis}; bincount supports axis 0, -1 or None."
        )
    per_row = axis == -1 and values.ndim > 1
    if axis == -1 and values.ndim > 2:
        raise errors.InvalidArgumentError(
            f"bincount with axis=-1 takes a 1-D or 2-D arr, got shape {list(values.shape)}."
        )
    length = int(values.max()) + 1 if values.size else 0
    if minlength is not None:
        length = max(length, int(minlength))
    if maxlength is not None:
        length = min(length, max(int(maxlength), 0))
    out_dtype = dtypes.as_dtype(dtype)
    w = None
    if weights is not None:
        wt = convert_to_tensor(weights)
        if wt._value.size:
            if wt._value.shape != values.shape:
                raise errors.InvalidArgumentError(
                    "`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which "
                    f"case it acts as all weights equal to 1. Received {list(wt._value.shape)} "
                    "[Op:DenseBincount]"
                )
            w, out_dtype = wt._value, wt._dtype
    rows = values.reshape(values.shape[0] if per_row else 1, -1)
    wrows = None if w is None else w.reshape(rows.shape)
    counts = np.zeros((rows.shape[0], length), out_dtype._np)
    for r in range(rows.shape[0]):
        keep = rows[r] < length
        if binary_output:
            counts[r, rows[r][keep]] = 1
        else:
            add = 1 if wrows is None else wrows[r][keep]
            np.add.at(counts[r], rows[r][keep], add)
    return make_tensor(counts if per_row else counts[0], out_dtype)


def _check_labels(values: np.ndarray, what: str, limit: int | None) -> None:
    if values.size and values.min() < 0:
        raise errors.InvalidArgumentError(f"`{what}` contains negative values.")
    if limit is not None and values.size and values.max() >= limit:
        raise errors.InvalidArgumentError(
            f"`{what}` out of bound: the largest is {int(values.max())}, num_classes is {limit}."
        )


def confusion_matrix(
    labels, predictions, num_classes=None, weights=None, dtype=dtypes.int32, name=None
) -> Tensor:
    """The ``[num_classes, num_classes]`` matrix counting (label, prediction) pairs: rows are
    labels, columns predictions; with ``weights``, each pair adds its weight.

    ``num_classes`` defaults to ``max(labels, predictions) + 1``.

    >>> import simdist as tf
    >>> tf.math.confusion_matrix([1, 2, 2], [2, 2, 1], num_classes=3).numpy()
    array([[0, 0, 0],
           [0, 0, 1],
           [0, 1, 1]], dtype=int32)

    Raises:
        InvalidArgumentError: a negative label or prediction, one at or past
            ``num_classes``, or labels and predictions of different sizes.
    """
    lab = _int_values(labels, "labels").reshape(-1)
    pred = _int_values(predictions, "predictions").reshape(-1)
    if lab.shape != pred.shape:
        raise errors.InvalidArgumentError(
            f"Shapes of all inputs must match: values[0].shape = {list(lab.shape)} != "
            f"values[1].shape = {list(pred.shape)}; labels and predictions pair up one to one."
        )
    limit = None if num_classes is None else int(num_classes)
    _check_labels(lab, "labels", limit)
    _check_labels(pred, "predictions", limit)
    if limit is None:
        limit = int(max(lab.max(initial=-1), pred.max(initial=-1))) + 1
    dtype = dtypes.as_dtype(dtype)
    matrix = np.zeros((limit, limit), dtype._np)
    add = 1 if weights is None else convert_to_tensor(weights, dtype=dtype)._value.reshape(-1)
    np.add.at(matrix, (lab, pred), add)
    return make_tensor(matrix, dtype)


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts of ``values`` in ``nbins`` equal bins spanning ``value_range = [lo, hi]``;
    values below ``lo`` count in the first bin, values at or above ``hi`` in the last.

    >>> import simdist as tf
    >>> tf.histogram_fixed_width([-1., 0., 1.5, 2., 5., 15.], [0., 5.], nbins=5).numpy()
    array([2, 1, 1, 0, 2], dtype=int32)

    Raises:
        InvalidArgumentError: ``lo >= hi``, ``nbins <= 0``, or a NaN value.
    """
    v = convert_to_tensor(values)
    rng = convert_to_tensor(value_range, dtype=v._dtype)._value.reshape(-1)
    count = int(convert_to_tensor(nbins)._value)
    dtype = dtypes.as_dtype(dtype)
    if rng.shape != (2,) or not rng[0] < rng[1]:
        raise errors.InvalidArgumentError(
            "value_range should satisfy value_range[0] < value_range[1], but got "
            f"'[{', '.join(str(r) for r in rng.tolist())}]' [Op:HistogramFixedWidth]"
        )
    if count <= 0:
        raise errors.InvalidArgumentError(
            f"nbins should be a positive number, but got '{count}' [Op:HistogramFixedWidth]"
        )
    data = v._value.reshape(-1)
    if data.dtype.kind == "f" and np.isnan(data).any():
        raise errors.InvalidArgumentError(
            "Histogram values must not contain NaN [Op:HistogramFixedWidth]"
        )
    compute = np.float64 if data.dtype.kind in "iu" else data.dtype
    lo, hi = rng.astype(compute)
    step = (data.astype(compute) - lo) / (hi - lo)
    bins = np.clip(np.floor(step * count), 0, count - 1).astype(np.int64)
    return make_tensor(np.bincount(bins, minlength=count), dtype)
