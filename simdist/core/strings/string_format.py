"""``tf.strings.format``: a template whose placeholders become tensors' summaries.

Each tensor is written as TF's summarizer writes it: NumPy-style brackets with one space
between items and no padding, strings in double quotes, booleans as 1/0, floats in the
shortest of ``%.6g``/``%.9g`` (``%.15g``/``%.17g`` for float64) that reads back as the same
number; a dimension longer than ``2 * summarize`` shows its first and last ``summarize``
items around ``...`` (``summarize=-1``: everything).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["format"]


def _float_text(value, digits: tuple[int, int], np_type) -> str:
    short = f"{value:.{digits[0]}g}"
    if np_type(float(short)) == np_type(value) or not np.isfinite(value):
        text = short
    else:
        text = f"{value:.{digits[1]}g}"
    return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(text, text)


def _item_formatter(tensor: Tensor):
    if tensor.dtype == dtypes.string:
        return lambda b: '"' + b.decode("utf-8", "backslashreplace") + '"'
    if tensor.dtype == dtypes.bool:
        return lambda v: "1" if v else "0"
    if tensor.dtype.is_floating:
        np_type = tensor.dtype.as_numpy_dtype
        digits = (15, 17) if tensor.dtype == dtypes.float64 else (6, 9)
        return lambda v: _float_text(v, digits, np_type)
    return str


def _summary(tensor: Tensor, summarize: int) -> str:
    array = tensor._value
    item = _item_formatter(tensor)
    if array.ndim == 0:
        return item(array[()])
    if array.size == 0:
        return "[]"
    edge = summarize if summarize >= 0 else max(array.shape)
    text = np.array2string(
        array,
        separator=" ",
        formatter={"all": item},
        threshold=0 if summarize >= 0 else np.iinfo(np.int64).max,
        edgeitems=max(edge, 1),
        max_line_width=np.iinfo(np.int32).max,
    )
    return text


def format(template, inputs, placeholder="{}", summarize=3, name=None) -> Tensor:
    """``template`` with each ``placeholder`` replaced by the next input's summary.

    >>> import simdist as tf
    >>> tf.strings.format("x={} y={}", (tf.constant([1, 2]), 3.5)).numpy()
    b'x=[1 2] y=3.5'

    Raises:
        ValueError: the number of placeholders is not the number of inputs.
    """
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    items = list(inputs)  # TF: a Python scalar here is a TypeError (it has no len())
    parts = template.split(placeholder)
    if len(parts) - 1 != len(items):
        raise ValueError(
            f"The template expects {len(parts) - 1} tensors, but the inputs only has "
            f"{len(items)}. Please ensure the number of placeholders in template matches "
            "inputs length."
        )
    if int(summarize) == 0 or int(summarize) < -1:
        raise errors.InvalidArgumentError("summarize must be -1 or a positive number.")
    texts = [_summary(convert_to_tensor(x), int(summarize)) for x in items]
    out = parts[0] + "".join(t + p for t, p in zip(texts, parts[1:], strict=True))
    result = np.empty((), dtype=object)
    result[()] = out.encode("utf-8")
    return make_tensor(result, dtypes.string)
