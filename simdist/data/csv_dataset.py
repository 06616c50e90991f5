"""``tf.data.experimental.CsvDataset``: the records of CSV files, one tuple per record.

Files are read as ``TextLineDataset`` reads them (the same file-name input, so FILE
auto-sharding shards them the same way; the same compression types), then cut into records
at each LF (a CR before it dropped) outside quoted fields, so a quoted field may span lines.
``header=True`` skips each file's first record. Fields are split and parsed as
``tf.io.decode_csv`` does (``simdist.core.ops.csv_ops``); ``select_cols`` or
``exclude_cols`` pick the columns. Errors are TF's, which do not number the record.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdist import errors
from simdist.core.ops import csv_ops
from simdist.core.tensor_spec import TensorSpec
from simdist.data.files import TextLineDataset, read_file

__all__ = ["CsvDataset"]

_WHERE = "in record"


def _records(data: bytes, quoted: bool):
    """The records of a file's bytes: lines, except inside quoted fields."""
    i, n = 0, len(data)
    while i < n:
        j = data.find(b"\n", i)
        if quoted:
            while j >= 0 and data.count(b'"', i, j) % 2:  # inside quotes: the line goes on
                j = data.find(b"\n", j + 1)
        j = n if j < 0 else j
        record = data[i:j]
        yield record[:-1] if record.endswith(b"\r") else record
        i = j + 1


class CsvDataset(TextLineDataset):
    """A tuple of scalars per CSV record of ``filenames``, typed by ``record_defaults``.

    Raises:
        InvalidArgumentError: both ``select_cols`` and ``exclude_cols``, a bad delimiter or
            default; at iteration, TF's record errors (field count, missing required field,
            not a number).
        ValueError: bad ``select_cols``.
    """

    def __init__(
        self,
        filenames,
        record_defaults,
        compression_type=None,
        buffer_size=None,
        header=False,
        field_delim=",",
        use_quote_delim=True,
        na_value="",
        select_cols=None,
        exclude_cols=None,
        name=None,
        ignore_errors=False,
    ) -> None:
        super().__init__(filenames, compression_type, buffer_size)
        self._columns = csv_ops.column_defaults(record_defaults)
        if select_cols and exclude_cols:
            raise errors.InvalidArgumentError("Either select_cols or exclude_cols should be empty")
        self._select = csv_ops.check_select_cols(select_cols, len(self._columns))
        self._exclude = sorted({int(c) for c in exclude_cols}) if exclude_cols else None
        delim = field_delim.encode() if isinstance(field_delim, str) else bytes(field_delim)
        if len(delim) != 1:
            raise errors.InvalidArgumentError("field_delim should be only 1 char")
        self._delim = delim[0]
        self._quoted = bool(use_quote_delim)
        self._header = bool(header)
        self._na = na_value.encode() if isinstance(na_value, str) else bytes(na_value)
        # make_csv_dataset(ignore_errors=True): records that fail to decode are skipped, as
        # TF's ignore_errors() after its per-file CsvDataset skips them
        self._ignore_errors = bool(ignore_errors)

    def _compute_element_spec(self) -> Any:
        return tuple(TensorSpec([], dtype) for dtype, _ in self._columns)

    def _decode(self, record: bytes) -> tuple:
        fields = csv_ops.split_fields(record, self._delim, self._quoted, _WHERE) or [b""]
        cols = self._select
        if self._exclude is not None:
            cols = [c for c in range(len(fields)) if c not in self._exclude]
        wanted = len(self._columns)
        if cols is None and len(fields) > wanted or cols is not None and len(cols) > wanted:
            raise errors.InvalidArgumentError(f"Expect {wanted} fields but have more {_WHERE}")
        if cols is not None and len(cols) < wanted:
            raise errors.InvalidArgumentError(
                f"Expect {wanted} fields but have {len(cols)} {_WHERE}"
            )
        values = csv_ops.decode_record(fields, self._columns, self._na, cols, _WHERE, False)
        out = []
        for value, (dtype, _) in zip(values, self._columns, strict=True):
            array = (
                np.empty((), dtype=object)
                if dtype.name == "string"
                else np.empty((), dtype.as_numpy_dtype)
            )
            array[()] = value
            out.append(array)
        return tuple(out)

    def _iterate(self):
        for name in self._input_datasets[0]._iterate():
            data = read_file(name.item().decode("utf-8"), self._compression)
            records = _records(data, self._quoted)
            if self._header:
                next(records, None)
            for record in records:
                try:
                    yield self._decode(record)
                except errors.InvalidArgumentError:
                    if not self._ignore_errors:
                        raise
