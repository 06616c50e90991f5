"""``tf.io.decode_csv``: CSV records into one tensor per column, as TF's ``DecodeCSV`` op.

A record splits at ``field_delim`` (one byte). With ``use_quote_delim`` a field may be
quoted (``"a,b"``, ``""`` for a quote inside); an unquoted field may hold no quote, CR or
LF. Each column's default (``record_defaults[i]``: a scalar or a one-element vector of
float32, float64, int32, int64 or string; an empty tensor for a required column) fixes its
dtype and fills empty fields and ``na_value``. Numbers parse as TF's ``safe_strto*``:
surrounding spaces allowed, decimal integers in range, floats with ``inf``/``nan``.
``select_cols`` (strictly increasing, non-negative) keeps those columns only. The same
splitter reads the records of ``tf.data.experimental.CsvDataset``.
"""

from __future__ import annotations

import re

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["decode_csv", "parse_field", "split_fields", "column_defaults"]

_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)
_INT = re.compile(rb"\s*[+-]?\d+\s*\Z")
_LIMITS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def split_fields(record: bytes, delim: int, quoted: bool, where: str) -> list[bytes]:
    """The fields of one record (``where`` names it in errors: ``"in record 0"``).

    Raises:
        InvalidArgumentError: a bad quote, or a quote, CR or LF in an unquoted field.
    """
    fields: list[bytes] = []
    if not record:
        return fields
    i, n = 0, len(record)
    while True:
        if quoted and i < n and record[i] == 0x22:  # a quoted field
            out = bytearray()
            i += 1
            while True:
                j = record.find(b'"', i)
                if j < 0:
                    raise errors.InvalidArgumentError(
                        f"Quoted field has to end with quote followed by delim or end {where}"
                    )
                out += record[i:j]
                if j + 1 < n and record[j + 1] == 0x22:  # "" is one quote
                    out += b'"'
                    i = j + 2
                    continue
                i = j + 1
                break
            if i < n and record[i] != delim:
                raise errors.InvalidArgumentError(
                    "Quote inside a string has to be escaped by another quote " + where
                )
            fields.append(bytes(out))
        else:
            j = record.find(bytes([delim]), i)
            j = n if j < 0 else j
            field = record[i:j]
            if quoted and (b'"' in field or b"\r" in field or b"\n" in field):
                raise errors.InvalidArgumentError(
                    f"Unquoted fields cannot have quotes/CRLFs inside {where}"
                )
            fields.append(field)
            i = j
        if i >= n:
            return fields
        i += 1  # the delimiter
        if i == n:  # a trailing delimiter: one more, empty field
            fields.append(b"")
            return fields


def parse_field(text: bytes, dtype: dtypes.DType, what: str):
    """One field as ``dtype`` (``what`` names it in errors).

    Raises:
        InvalidArgumentError: not a valid number of that type.
    """
    if dtype == dtypes.string:
        return text
    bad = errors.InvalidArgumentError(
        f"{what} is not a valid {dtype.name}: {text.decode('utf-8', 'replace')}"
    )
    if dtype in (dtypes.int32, dtypes.int64):
        if not _INT.match(text):
            raise bad
        value = int(text)
        low, high = _LIMITS[dtype.name]
        if not low <= value <= high:
            raise bad
        return value
    if b"_" in text or text.strip().lower().startswith((b"0x", b"-0x", b"+0x")):
        raise bad  # Python's float() takes these; TF's strtod does not
    try:
        return float(text)
    except ValueError:
        raise bad from None


def column_defaults(record_defaults) -> list[tuple[dtypes.DType, object]]:
    """``(dtype, default or None when required)`` per column.

    Raises:
        InvalidArgumentError: a default of rank > 1, more than one value, or another dtype.
    """
    if len(record_defaults) == 0:
        raise errors.InvalidArgumentError(
            "decode_csv needs record_defaults: one default (or an empty tensor for a "
            "required column) per field."
        )
    columns = []
    for i, default in enumerate(record_defaults):
        tensor = default if isinstance(default, Tensor) else convert_to_tensor(default)
        value = tensor._value
        if value.ndim > 1:
            raise errors.InvalidArgumentError("Each record default should be at most rank 1")
        if value.size > 1:
            raise errors.InvalidArgumentError(
                f"There should only be 1 default per field but field {i} has {value.size}"
            )
        if tensor.dtype not in _TYPES:
            raise errors.InvalidArgumentError(
                f"Value for attr 'OUT_TYPE' of {tensor.dtype.name} is not in the list of "
                "allowed values: float, double, int32, int64, string"
            )
        columns.append((tensor.dtype, value.reshape(-1)[0] if value.size else None))
    return columns


def check_select_cols(select_cols, n_defaults: int) -> list[int] | None:
    """``select_cols`` as a list (None for all columns).

    Raises:
        ValueError: negative, not strictly increasing, or not one per default.
    """
    if select_cols is None or len(select_cols) == 0:
        return None
    cols = [int(c) for c in select_cols]
    if any(c < 0 for c in cols):
        raise ValueError("select_cols contains negative values.")
    if any(b <= a for a, b in zip(cols, cols[1:], strict=False)):
        raise ValueError("select_cols is not strictly increasing.")
    if len(cols) != n_defaults:
        raise ValueError("Length of select_cols and record_defaults do not match.")
    return cols


def decode_record(fields, columns, na_value: bytes, cols, where: str, exact_where: bool) -> list:
    """The values of one record's selected fields (errors as TF words them)."""
    wanted = len(columns)
    if cols is None:
        if len(fields) != wanted:
            raise errors.InvalidArgumentError(
                f"Expect {wanted} fields but have {len(fields)} {where}"
            )
        chosen = fields
    else:
        if len(fields) <= cols[-1]:
            raise errors.InvalidArgumentError(
                f"Expect {wanted} fields but have {len(fields)} {where}"
            )
        chosen = [fields[c] for c in cols]
    values = []
    for k, (field, (dtype, default)) in enumerate(zip(chosen, columns, strict=True)):
        if field == b"" or field == na_value:
            if default is None:
                raise errors.InvalidArgumentError(f"Field {k} is required but missing {where}!")
            values.append(default)
        else:
            values.append(parse_field(field, dtype, f"Field {k} {where}"))
    return values


def decode_csv(
    records,
    record_defaults,
    field_delim=",",
    use_quote_delim=True,
    name=None,
    na_value="",
    select_cols=None,
) -> list[Tensor]:
    """One tensor per column of ``records`` (any shape of strings): ``tf.io.decode_csv``.

    >>> import simdist as tf
    >>> [t.numpy().tolist() for t in tf.io.decode_csv(["1,2.5,a", "3,,b"], [[0], [0.0], [""]])]
    [[1, 3], [2.5, 0.0], [b'a', b'b']]

    Raises:
        InvalidArgumentError: a record with the wrong number of fields, a missing required
            field, a field that is not a number of its column's dtype, a bad quote.
        ValueError: bad ``select_cols``.
    """
    delim = field_delim.encode() if isinstance(field_delim, str) else bytes(field_delim)
    if len(delim) != 1:
        raise errors.InvalidArgumentError("field_delim should be only 1 char")
    columns = column_defaults(record_defaults)
    cols = check_select_cols(select_cols, len(columns))
    na = na_value.encode() if isinstance(na_value, str) else bytes(na_value)
    tensor = records if isinstance(records, Tensor) else convert_to_tensor(records, dtypes.string)
    if tensor.dtype != dtypes.string:
        raise TypeError(f"decode_csv takes string records, got {tensor.dtype.name}.")
    flat = tensor._value.reshape(-1)
    out = [[] for _ in columns]
    for r, record in enumerate(flat):
        where = f"in record {r}"
        fields = split_fields(record, delim[0], bool(use_quote_delim), where)
        for column, value in zip(
            out, decode_record(fields, columns, na, cols, where, True), strict=True
        ):
            column.append(value)
    shape = tensor._value.shape
    results = []
    for values, (dtype, _) in zip(out, columns, strict=True):
        array = (
            np.empty(len(values), dtype=object)
            if dtype == dtypes.string
            else np.empty(len(values), dtype.as_numpy_dtype)
        )
        array[:] = values
        results.append(make_tensor(array.reshape(shape), dtype))
    return results
