"""``print``: TF's ``tf.print``, which shows tensors the way TF's C++ runtime formats them.

A tensor prints as its values in brackets separated by spaces (``[1 2 3]``, nested rows on
new lines), without dtype or shape; floats use up to 6 significant digits (``0.333333``,
``2`` for ``2.0``); at most ``summarize`` leading and trailing entries are shown per
dimension, with ``...`` between. Python structures holding tensors print with each tensor so
formatted; other values print with ``str``.
"""

from __future__ import annotations

import sys

import numpy as np

from simdist.core import nest
from simdist.core.tensor import Tensor

__all__ = ["print", "format_tensor"]


def _scalar_text(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if np.isnan(f):
            return "nan" if not np.signbit(f) else "-nan"
        if np.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f"{f:.6g}"
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def format_tensor(value: np.ndarray, summarize: int = 3) -> str:
    """The text ``tf.print`` shows for an array; ``summarize=-1`` shows every entry."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return _scalar_text(arr[()])
    return _format_dims(arr, summarize, depth=0)


def _format_dims(arr: np.ndarray, summarize: int, depth: int) -> str:
    n = arr.shape[0]
    if 0 <= summarize and 2 * summarize < n:
        picks = list(range(summarize)) + [None] + list(range(n - summarize, n))
    else:
        picks = list(range(n))
    if arr.ndim == 1:
        parts = ["..." if i is None else _scalar_text(arr[i]) for i in picks]
        return "[" + " ".join(parts) + "]"
    sep = "\n" + " " * (depth + 1)
    parts = ["..." if i is None else _format_dims(arr[i], summarize, depth + 1) for i in picks]
    return "[" + sep.join(parts) + "]"


def _text(obj, summarize: int) -> str:
    if isinstance(obj, Tensor):
        return format_tensor(obj._value, summarize)
    if hasattr(obj, "_to_tensor") and hasattr(obj, "numpy"):
        return format_tensor(np.asarray(obj.numpy()), summarize)
    if nest.is_nested(obj):
        leaves = nest.flatten(obj)
        if any(isinstance(v, Tensor) or hasattr(v, "_to_tensor") for v in leaves):
            return _nested_text(obj, summarize)
    return str(obj)


def _nested_text(obj, summarize: int) -> str:
    if isinstance(obj, dict):
        items = ", ".join(f"{k!r}: {_nested_text(v, summarize)}" for k, v in obj.items())
        return "{" + items + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(_nested_text(v, summarize) for v in obj) + "]"
    if isinstance(obj, tuple):
        inner = ", ".join(_nested_text(v, summarize) for v in obj)
        return "(" + inner + ("," if len(obj) == 1 else "") + ")"
    if isinstance(obj, Tensor) or hasattr(obj, "_to_tensor"):
        return _text(obj, summarize)
    return repr(obj) if isinstance(obj, str) else str(obj)


def print(
    *inputs, output_stream=None, sep: str = " ", end: str = "\n", summarize=3, name=None
) -> None:
    """Print ``inputs`` as TF's ``tf.print`` does (to stderr by default).

    Args:
        *inputs: tensors, variables, Python values, or structures containing tensors.
        output_stream: a file-like object (default: ``sys.stderr`` at call time), or the
            strings ``"stdout"`` / ``"stderr"``.
        sep: the text between inputs.
        end: the text after the last input.
        summarize: entries shown at each end of every dimension; ``-1`` or ``None`` for all.
    """
    if summarize is None:
        summarize = -1
    text = sep.join(_text(obj, int(summarize)) for obj in inputs) + end
    stream = sys.stderr if output_stream is None else output_stream
    if isinstance(stream, str):
        stream = {"stdout": sys.stdout, "stderr": sys.stderr}.get(stream.rsplit("/", 1)[-1])
        if stream is None:
            raise ValueError(f"output_stream must be a file-like object, got {output_stream!r}.")
    stream.write(text)
    if hasattr(stream, "flush"):
        stream.flush()
