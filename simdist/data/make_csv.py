"""``tf.data.experimental.make_csv_dataset``: batches of feature dicts from CSV files.

The pipeline is TF's: the files matching the pattern (in glob order, shuffled when
``shuffle``) read by ``CsvDataset`` through ``interleave`` (``num_parallel_reads`` files at
a time, one record from each in turn), then shuffle and repeat (``num_epochs``; ``None``
repeats forever and then drops the last partial batch), batch, and each batch made an
ordered dict ``{column name: values}`` (with the ``label_name`` column split off as the
label). Column names come from the first file's header (every file must have it), column
types from the first ``num_rows_for_inference`` records when ``column_defaults`` is not
given: the narrowest of int32, int64, float32, float64 and string that holds every value
of the column (empty and ``na_value`` fields left out), as TF infers them. The shuffles are
simdist's seeded ones (docs/tf-surface.md).
"""

from __future__ import annotations

import collections
import csv
import glob
import gzip
import io
from collections.abc import Iterator

import numpy as np

from simdist.core import dtypes
from simdist.core.tensor import make_tensor
from simdist.data.csv_dataset import CsvDataset
from simdist.data.dataset import Dataset
from simdist.data.files import compression_kind, read_file
from simdist.data.options import AUTOTUNE
from simdist.data.sources import TensorSliceDataset

__all__ = ["make_csv_dataset"]

_ORDER = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string)


def _fits(text: str, dtype) -> bool:
    try:
        if dtype == dtypes.int32:
            return np.int32(text) == np.int64(text)
        if dtype == dtypes.int64:
            np.int64(text)
            return True
        if dtype in (dtypes.float32, dtypes.float64):
            return bool(dtype.as_numpy_dtype(text) < np.inf)
    except (ValueError, OverflowError):
        return False
    return True  # string


def _widen(text: str, na_value: str, previous):
    """The narrowest type holding ``text`` and everything seen before (``previous``)."""
    if text in ("", na_value):
        return previous
    start = 0 if previous is None else _ORDER.index(previous)
    return next(t for t in _ORDER[start:] if _fits(text, t))


def _file_names(file_pattern) -> list[str]:
    patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    if not patterns:
        raise ValueError("Argument `file_pattern` should not be empty.")
    names = [n for p in patterns for n in sorted(glob.glob(p))]
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return names


def _rows(path: str, delim: str, quoted: bool, compression: str, encoding: str) -> Iterator[list]:
    if compression == "ZLIB":
        raise ValueError("`compression_type` ZLIB is not supported for probing columns.")
    data = gzip.decompress(open(path, "rb").read()) if compression == "GZIP" else read_file(path)
    quoting = csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE
    yield from csv.reader(io.StringIO(data.decode(encoding)), delimiter=delim, quoting=quoting)


def _duplicates(names) -> set:
    ordered = sorted(names)
    return {a for a, b in zip(ordered, ordered[1:], strict=False) if a == b}


def _column_names(files, delim, quoted, compression, encoding) -> list[str]:
    names = None
    for path in files:
        header = next(_rows(path, delim, quoted, compression, encoding), None)
        if header is None:
            raise ValueError(f"Failed when reading the header line of {path}. Is it an empty file?")
        if names is None:
            names = header
        elif header != names:
            raise ValueError(
                "All input CSV files should have the same column names in the header row. "
                f"File {path} has different column names."
            )
    return names


def _select(select_columns, names) -> list[int]:
    index = {n: i for i, n in enumerate(names)}
    out = []
    for v in select_columns:
        if isinstance(v, int):
            if not 0 <= v < len(names):
                raise ValueError(
                    f"Column index {v} specified in `select_columns` should be > 0  and <= "
                    f"{len(names)}, which is the number of columns."
                )
            out.append(v)
        elif v not in index:
            raise ValueError(
                f"Column {v} specified in `select_columns` must be of one of the columns: "
                f"{list(index)}."
            )
        else:
            out.append(index[v])
    if len(set(out)) != len(out):
        raise ValueError(
            f"The `select_columns` argument contains duplicate columns: {_duplicates(out)}."
        )
    return sorted(out)


def _infer_defaults(
    files, names, select, delim, quoted, na_value, header, rows_for_inference, compression, encoding
):
    types = [None] * len(select)
    seen = 0
    for path in files:
        rows = _rows(path, delim, quoted, compression, encoding)
        if header:
            next(rows, None)
        for number, row in enumerate(rows, start=2 if header else 1):
            if rows_for_inference is not None and seen >= rows_for_inference:
                break
            if len(row) != len(names):
                raise ValueError(
                    f"Problem inferring types: CSV row {number} has {len(row)} number of "
                    f"fields. Expected: {len(names)}."
                )
            for j, column in enumerate(select):
                types[j] = _widen(row[column], na_value, types[j])
            seen += 1
    types = [t or dtypes.string for t in types]
    return [
        make_tensor(np.array([b"" if t == dtypes.string else 0], t.as_numpy_dtype), t)
        for t in types
    ]


def make_csv_dataset(
    file_pattern,
    batch_size,
    column_names=None,
    column_defaults=None,
    label_name=None,
    select_columns=None,
    field_delim=",",
    use_quote_delim=True,
    na_value="",
    header=True,
    num_epochs=None,
    shuffle=True,
    shuffle_buffer_size=10000,
    shuffle_seed=None,
    prefetch_buffer_size=None,
    num_parallel_reads=None,
    sloppy=False,
    num_rows_for_inference=100,
    compression_type=None,
    ignore_errors=False,
    encoding="utf-8",
) -> Dataset:
    """Batches of ``{column: values}`` (and labels) read from CSV files, as TF's.

    >>> import os, tempfile, simdist as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "a.csv")
    >>> _ = open(path, "w").write("x,label\\n1.5,0\\n2.5,1\\n")
    >>> features, labels = next(iter(tf.data.experimental.make_csv_dataset(
    ...     path, 2, label_name="label", num_epochs=1, shuffle=False)))
    >>> features["x"].numpy().tolist(), labels.numpy().tolist()
    ([1.5, 2.5], [0, 1])

    Raises:
        ValueError: no file matches, no header and no ``column_names``, duplicate or
            unknown columns, ``label_name`` not a column, rows of the wrong length while
            inferring types, defaults and selected columns of different lengths.
    """
    files = _file_names(file_pattern)
    compression = compression_kind(compression_type)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = _column_names(files, field_delim, use_quote_delim, compression, encoding)
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        raise ValueError(
            "Either `column_names` argument or CSV header row contains duplicate column "
            f"names: {_duplicates(column_names)}."
        )
    select = _select(select_columns, column_names) if select_columns is not None else None
    if column_defaults is not None:
        column_defaults = [
            make_tensor(
                np.zeros(0, d.as_numpy_dtype) if d != dtypes.string else np.zeros(0, object), d
            )
            if isinstance(d, dtypes.DType)
            else d
            for d in column_defaults
        ]
    else:
        column_defaults = _infer_defaults(
            files,
            column_names,
            select if select is not None else range(len(column_names)),
            field_delim,
            use_quote_delim,
            na_value,
            header,
            num_rows_for_inference,
            compression,
            encoding,
        )
    if select is not None and len(column_defaults) != len(select):
        raise ValueError(
            "If specified, `column_defaults` and `select_columns` must have the same length: "
            f"`column_defaults` has length {len(column_defaults)}, `select_columns` has "
            f"length {len(select)}."
        )
    if select is not None and len(column_names) > len(select):
        column_names = [column_names[i] for i in select]
    if label_name is not None and label_name not in column_names:
        raise ValueError(
            f"`label_name` provided must be one of the columns: {column_names}. Received: "
            f"{label_name}."
        )

    def read(name):
        return CsvDataset(
            name,
            column_defaults,
            compression_type=compression_type,
            header=header,
            field_delim=field_delim,
            use_quote_delim=use_quote_delim,
            na_value=na_value,
            select_cols=select,
            ignore_errors=ignore_errors,
        )

    def as_dict(*columns):
        features = collections.OrderedDict(zip(column_names, columns, strict=True))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    names = TensorSliceDataset(np.array([f.encode("utf-8") for f in files], dtype=object))
    if shuffle:
        names = names.shuffle(len(files), shuffle_seed)
    cycle = 1 if num_parallel_reads is None else num_parallel_reads
    dataset = names.interleave(read, cycle_length=cycle, block_length=1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    return dataset.map(as_dict).prefetch(
        AUTOTUNE if prefetch_buffer_size is None else prefetch_buffer_size
    )
