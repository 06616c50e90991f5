"""Elementwise string ops: ``join``, ``reduce_join``, ``length``, ``lower``/``upper``, ``strip``,
``regex_replace``, ``regex_full_match``, ``substr``, ``to_number``, ``as_string``.

Strings are bytes. As TF: ``lower``/``upper`` change ASCII letters only unless
``encoding="utf-8"``; ``length`` and ``substr`` count bytes unless ``unit="UTF8_CHAR"``;
regular expressions are RE2's, run here by Python's ``re`` on the UTF-8 text with ASCII
character classes (``\\w``, ``\\d``, ``\\s`` are ASCII in RE2), which agrees on the patterns
text pipelines use (docs/differences.md names the rest). Every op here also takes a
RaggedTensor and keeps its rows.
"""

from __future__ import annotations

import builtins
import functools
import re

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.strings._text import as_bytes, elementwise, string_array, string_tensor
from simdist.core.tensor import Tensor, make_tensor

__all__ = [
    "join", "reduce_join", "length", "lower", "upper", "strip", "regex_replace",
    "regex_full_match", "substr", "to_number", "as_string",
]  # fmt: skip


def _map(array: np.ndarray, fn) -> Tensor:
    return string_tensor([fn(v) for v in array.ravel().tolist()], array.shape)


def join(inputs, separator="", name=None) -> Tensor:
    """Join strings elementwise across the tensors of ``inputs`` (they broadcast).

    Raises:
        InvalidArgumentError: shapes that do not broadcast.
    """
    sep = as_bytes(separator)
    arrays = [string_array(x, "StringJoin") for x in inputs]
    try:
        columns = np.broadcast_arrays(*arrays)
    except ValueError as exc:
        raise errors.InvalidArgumentError(
            f"Input shapes do not match: {[list(a.shape) for a in arrays]} [Op:StringJoin]; "
            "strings join elementwise, so the shapes must broadcast."
        ) from exc
    shape = columns[0].shape
    flat = [c.ravel().tolist() for c in columns]
    return string_tensor([sep.join(parts) for parts in zip(*flat, strict=True)], shape)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None) -> Tensor:
    """Join the strings along ``axis`` (all of them when None); a RaggedTensor joins its rows
    on its last axis.

    Raises:
        InvalidArgumentError: an axis out of range.
        UnimplementedError: a ragged input joined along another axis than its last.
    """
    sep = as_bytes(separator)
    if is_ragged(inputs):
        rank = inputs.shape.rank
        if axis is None:
            return reduce_join(inputs.flat_values, None, keepdims, separator)
        if axis % rank != rank - 1 or inputs.flat_values.ndim != 1 or keepdims:
            raise errors.UnimplementedError(
                "simdist's reduce_join of a RaggedTensor joins along its last axis only, "
                "without keepdims (docs/differences.md)."
            )
        rows = inputs.values._value.tolist() if not is_ragged(inputs.values) else None
        if rows is None:
            return inputs.with_values(reduce_join(inputs.values, -1, False, separator))
        s = inputs.row_splits._value.tolist()
        return string_tensor(
            [sep.join(rows[s[i] : s[i + 1]]) for i in range(len(s) - 1)], (len(s) - 1,)
        )
    array = string_array(inputs, "ReduceJoin")
    if axis is None:
        axes = tuple(range(array.ndim))
    else:
        raw = np.asarray(getattr(axis, "_value", axis)).reshape(-1).tolist()
        for a in raw:
            if not -max(array.ndim, 1) <= a < max(array.ndim, 1):
                raise errors.InvalidArgumentError(
                    f"Invalid reduction dimension {a} for input with {array.ndim} dimensions."
                )
        axes = tuple(sorted({a % array.ndim for a in raw}))
    kept = [d for d in range(array.ndim) if d not in axes]
    moved = np.transpose(array, kept + list(axes))
    out_shape = moved.shape[: len(kept)]
    flat = moved.reshape((int(np.prod(out_shape, dtype=np.int64)), -1))
    joined = [sep.join(row.tolist()) for row in flat]
    result = np.empty(len(joined), dtype=object)
    result[:] = joined
    result = result.reshape(out_shape)
    if keepdims:
        result = result.reshape(tuple(1 if d in axes else n for d, n in enumerate(array.shape)))
    return make_tensor(result, dtypes.string)


def _check_unit(unit: str, op: str) -> None:
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"{op}: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}.")


@elementwise
def length(input, name=None, unit="BYTE") -> Tensor:
    """The length of each string in bytes, or in Unicode characters (``unit="UTF8_CHAR"``)."""
    _check_unit(unit, "length")
    array = string_array(input, "StringLength")
    count = len if unit == "BYTE" else (lambda b: len(b.decode("utf-8", "replace")))
    flat = np.asarray([count(v) for v in array.ravel().tolist()], np.int32)
    return make_tensor(flat.reshape(array.shape), dtypes.int32)


@elementwise
def lower(input, encoding="", name=None) -> Tensor:
    """Lower-case: ASCII letters only, or every letter with ``encoding="utf-8"``."""
    array = string_array(input, "StringLower")
    if encoding.lower().replace("-", "") == "utf8":
        return _map(
            array,
            lambda b: (
                b.decode("utf-8", "surrogateescape").lower().encode("utf-8", "surrogateescape")
            ),
        )
    return _map(array, bytes.lower)


@elementwise
def upper(input, encoding="", name=None) -> Tensor:
    """Upper-case: ASCII letters only, or every letter with ``encoding="utf-8"``."""
    array = string_array(input, "StringUpper")
    if encoding.lower().replace("-", "") == "utf8":
        return _map(
            array,
            lambda b: (
                b.decode("utf-8", "surrogateescape").upper().encode("utf-8", "surrogateescape")
            ),
        )
    return _map(array, bytes.upper)


@elementwise
def strip(input, name=None) -> Tensor:
    """Leading and trailing ASCII whitespace removed."""
    return _map(string_array(input, "StringStrip"), bytes.strip)


@functools.lru_cache(maxsize=256)
def _compile(pattern: bytes, op: str) -> re.Pattern:
    text = pattern.decode("utf-8", "surrogateescape")
    try:
        return re.compile(text, re.ASCII)
    except re.error as exc:
        raise errors.InvalidArgumentError(
            f"Invalid pattern: {text}, error: {exc} [Op:{op}]"
        ) from exc


def _rewrite(rewrite: str) -> str:
    """RE2's rewrite string (``\\1`` groups, ``\\\\`` a backslash) as Python's ``re.sub``'s."""
    return rewrite.replace("\\\\", "\x00").replace("\\0", "\\g<0>").replace("\x00", "\\\\")


def _decode(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _encode(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


@elementwise
def regex_replace(input, pattern, rewrite, replace_global=True, name=None) -> Tensor:
    """Replace matches of ``pattern`` with ``rewrite`` (``\\1`` names a group); the first
    match only when ``replace_global=False``.

    Raises:
        InvalidArgumentError: an invalid pattern.
    """
    regex = _compile(as_bytes(pattern), "StaticRegexReplace")
    repl = _rewrite(_decode(as_bytes(rewrite)))
    count = 0 if replace_global else 1
    return _map(
        string_array(input, "StaticRegexReplace"),
        lambda b: _encode(regex.sub(repl, _decode(b), count=count)),
    )


@elementwise
def regex_full_match(input, pattern, name=None) -> Tensor:
    """True where the whole string matches ``pattern``.

    Raises:
        InvalidArgumentError: an invalid pattern.
    """
    regex = _compile(as_bytes(pattern), "StaticRegexFullMatch")
    array = string_array(input, "StaticRegexFullMatch")
    flat = [regex.fullmatch(_decode(b)) is not None for b in array.ravel().tolist()]
    return make_tensor(np.asarray(flat, bool).reshape(array.shape), dtypes.bool)


def _utf8_starts(b: bytes) -> list[int]:
    """Byte offsets of each UTF-8 character of ``b``, then ``len(b)``."""
    starts = [i for i, byte in enumerate(b) if byte & 0xC0 != 0x80]
    return [*starts, len(b)]


@elementwise
def substr(input, pos, len, name=None, unit="BYTE") -> Tensor:
    """``len`` bytes (or characters) from ``pos`` (negative: from the end) of each string;
    ``pos`` and ``len`` broadcast against the strings.

    Raises:
        InvalidArgumentError: ``pos`` outside a string (``-length <= pos <= length``).
    """
    _check_unit(unit, "substr")
    array = string_array(input, "Substr")
    positions = np.asarray(convert_to_tensor(pos)._value)
    lengths = np.asarray(convert_to_tensor(len)._value)
    strings, positions, lengths = np.broadcast_arrays(array, positions, lengths)
    out = []
    for index, (b, p, n) in enumerate(
        zip(
            strings.ravel().tolist(),
            positions.ravel().tolist(),
            lengths.ravel().tolist(),
            strict=True,
        )
    ):
        bounds = list(range(builtins.len(b) + 1)) if unit == "BYTE" else _utf8_starts(b)
        size = builtins.len(bounds) - 1
        if not -size <= p <= size:
            raise errors.InvalidArgumentError(
                f"pos {p} out of range for string b'{_decode(b)}' at index {index} [Op:Substr]"
            )
        start = p + size if p < 0 else p
        stop = min(start + max(n, 0), size)
        out.append(b[bounds[start] : bounds[stop]])
    return string_tensor(out, strings.shape)


_NUMBER_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def _parse(text: bytes, integer: bool):
    stripped = text.strip()
    if b"_" in stripped or not stripped:
        raise ValueError(text)
    if integer:
        return int(stripped)
    body = stripped.lstrip(b"+-")
    if body[:2].lower() == b"0x":  # strtod reads hexadecimal, as TF's parser does
        return float.fromhex(stripped.decode("ascii"))
    return float(stripped)


@elementwise
def to_number(string_tensor, out_type=dtypes.float32, name=None) -> Tensor:
    """Parse each string as a number of ``out_type`` (float32, float64, int32, int64).

    Raises:
        InvalidArgumentError: a string that is not a number of that type ("1.5" as int32),
            or an integer out of its range, as TF's.
        TypeError: another ``out_type``.
    """
    out_type = dtypes.as_dtype(out_type)
    if out_type not in _NUMBER_TYPES:
        raise TypeError(
            f"Value passed to parameter 'out_type' has DataType {out_type.name} not in list of "
            "allowed values: float32, float64, int32, int64"
        )
    array = string_array(string_tensor, "StringToNumber")
    np_type = out_type.as_numpy_dtype
    values = []
    for b in array.ravel().tolist():
        try:
            number = _parse(b, out_type.is_integer)
            if out_type.is_integer:
                info = np.iinfo(np_type)
                if not info.min <= number <= info.max:
                    raise ValueError(b)
        except ValueError:
            raise errors.InvalidArgumentError(
                f"StringToNumberOp could not correctly convert string: {_decode(b)} "
                "[Op:StringToNumber]"
            ) from None
        values.append(number)
    with np.errstate(over="ignore"):
        return make_tensor(np.asarray(values, np_type).reshape(array.shape), out_type)


def as_string(
    input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None
) -> Tensor:
    """Each number as text: floats ``%f`` (``precision`` digits, ``%e`` when ``scientific``,
    ``%g`` when ``shortest``), integers ``%d``, booleans ``true``/``false``, padded to
    ``width`` with ``fill`` (spaces by default; ``"0"`` zero-pads).

    Raises:
        InvalidArgumentError: ``scientific`` and ``shortest`` together; a fill other than
            "", " " or "0".
    """
    if is_ragged(input):
        return input.with_flat_values(
            as_string(input.flat_values, precision, scientific, shortest, width, fill)
        )
    tensor = convert_to_tensor(input)
    if tensor.dtype == dtypes.string:
        return tensor  # TF: strings pass through unchanged
    if scientific and shortest:
        raise errors.InvalidArgumentError("Cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise errors.InvalidArgumentError(f"Fill string must be one or fewer characters: {fill}")
    if fill not in ("", " ", "0"):
        raise errors.InvalidArgumentError(f'Fill argument not supported: "{fill}" [Op:AsString]')
    flags = "0" if fill == "0" else ""
    width_part = "" if width < 0 else str(width)
    array = tensor._value
    if tensor.dtype == dtypes.bool:
        texts = ["true" if v else "false" for v in array.ravel().tolist()]  # width ignored
    elif tensor.dtype.is_integer:
        texts = [("%" + flags + width_part + "d") % v for v in array.ravel().tolist()]
    else:
        kind = "e" if scientific else ("g" if shortest else "f")
        precision_part = "" if precision < 0 else f".{precision}"
        pattern = "%" + flags + width_part + precision_part + kind
        texts = [pattern % float(v) for v in array.ravel().tolist()]
    return string_tensor([t.encode("ascii") for t in texts], array.shape)
