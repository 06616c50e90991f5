"""File sources: ``Dataset.list_files`` and ``TextLineDataset``.

A file reader keeps the dataset of its file names as its only input and sets
``_reads_files = True``; ``_file_names()`` lists the files it will read, in order. FILE
auto-sharding finds the readers of a pipeline by walking ``_inputs()`` and shards their
file-name inputs (``reader._with_inputs([names.shard(n, i)])``).

``list_files`` globs the patterns (``*``, ``?``, ``[...]``; no recursive ``**``), sorts
the union of the matches, and by default shuffles them as TF does, with a seeded shuffle
(see ``simdist.data.shuffle``): the order is reproducible, and ``shuffle=False`` keeps
the sorted order.
"""

from __future__ import annotations

import glob
import re
import zlib
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor
from simdist.core.tensor_spec import TensorSpec
from simdist.data.dataset import UNKNOWN, Dataset
from simdist.data.sources import TensorSliceDataset

__all__ = ["TextLineDataset", "compression_kind", "list_files", "names_dataset", "read_file"]


def _as_names(value: Any, what: str) -> list[str]:
    """File names or patterns from a str, bytes, list of them, or string tensor."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    items = value if isinstance(value, (list, tuple)) else [value]
    names = []
    for item in items:
        if isinstance(item, bytes):
            item = item.decode("utf-8")
        if not isinstance(item, str):
            raise TypeError(f"{what} must be strings, got {item!r} ({type(item).__name__}).")
        names.append(item)
    return names


def names_dataset(filenames) -> Dataset:
    """The dataset of file names a reader reads: ``filenames`` itself when it is a dataset
    of scalar strings, else the names of a str, bytes, (nested) list or string tensor, in
    order (flattened, as TF does).

    Raises:
        TypeError: ``filenames`` is not strings (or a dataset of other elements).
    """
    if isinstance(filenames, Dataset):
        spec = filenames.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.string:
            got = f"`tf.{spec.dtype.name}`" if isinstance(spec, TensorSpec) else str(spec)
            raise TypeError(
                "The `filenames` argument must contain `tf.string` elements. Got a dataset of "
                f"{got} elements."
            )
        if spec.shape.rank not in (0, None):
            raise TypeError(
                "The `filenames` argument must contain `tf.string` elements of shape [] "
                f"(i.e. scalars). Got a dataset of element shape {spec.shape}."
            )
        return filenames
    value = filenames.numpy() if isinstance(filenames, Tensor) else filenames
    flat = np.asarray(value, dtype=object).reshape(-1).tolist()
    if not all(isinstance(v, (str, bytes)) for v in flat):
        kind = convert_to_tensor(value).dtype.name if flat else "float32"
        raise TypeError(
            "The `filenames` argument must contain `tf.string` elements. Got "
            f"`tf.{kind}` elements."
        )
    names = [v.encode("utf-8") if isinstance(v, str) else v for v in flat]
    array = np.empty(len(names), dtype=object)
    array[:] = names
    return TensorSliceDataset(array)


def compression_kind(compression_type: str | None) -> str:
    """``""``, ``"GZIP"`` or ``"ZLIB"`` for a reader's ``compression_type``.

    Raises:
        InvalidArgumentError: another compression type.
    """
    kind = (compression_type or "").upper()
    if kind not in ("", "GZIP", "ZLIB"):
        raise errors.InvalidArgumentError(
            f"Unsupported compression_type: {compression_type!r}. Use None, '', 'GZIP' or "
            "'ZLIB'."
        )
    return kind


def read_file(path: str, compression: str = "") -> bytes:
    """A whole file's bytes, decompressed (``compression`` from :func:`compression_kind`).

    Raises:
        NotFoundError: no such file.
        DataLossError: the file is not a valid GZIP or ZLIB stream (TF's message).
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}; No such file or directory") from None
    if not compression:
        return data
    window = 31 if compression == "GZIP" else 15
    out = []
    rest = data
    try:
        while rest:  # a GZIP file may hold several members, one after another
            stream = zlib.decompressobj(window)
            out.append(stream.decompress(rest))
            if not stream.eof:
                raise errors.DataLossError(f"{path}: the compressed stream is cut short")
            rest = stream.unused_data if compression == "GZIP" else b""
    except zlib.error as exc:
        found = re.match(r"Error (-?\d+) while decompressing data: (.*)", str(exc))
        code, reason = found.groups() if found else ("?", str(exc))
        raise errors.DataLossError(f"inflate() failed with error {code}: {reason}") from None
    return b"".join(out)


def list_files(file_pattern, shuffle=None, seed=None) -> Dataset:
    """A dataset of the file names matching ``file_pattern`` (``Dataset.list_files``).

    Args:
        file_pattern: a glob pattern, or a list of patterns (or a string tensor of them).
        shuffle: shuffle the names (default True, as TF; seeded, reproducible).
        seed: the shuffle's op seed.

    Returns:
        A dataset of scalar tf.string tensors.

    Raises:
        InvalidArgumentError: no file matches any pattern.
    """
    patterns = _as_names(file_pattern, "file patterns")
    matches = sorted({path for p in patterns for path in glob.glob(p)})
    if not matches:
        shown = ", ".join(repr(p) for p in patterns)
        raise errors.InvalidArgumentError(
            f"No files matched pattern: {shown}. Check the directory and the glob."
        )
    names = TensorSliceDataset(np.array([m.encode("utf-8") for m in matches], dtype=object))
    if shuffle is None or shuffle:
        names = names.shuffle(len(matches), seed=seed)
    return names


class TextLineDataset(Dataset):
    """One scalar string element per line of each file, newline removed (``TextLineDataset``).

    Files are read in the order given, lazily (at iteration). A trailing ``\\r`` is removed
    with the ``\\n``; a last line without newline still counts; an empty file gives nothing.

    Args:
        filenames: a file name, a list of them, a string tensor, or a string Dataset.
        compression_type: ``None``/``""`` (plain), ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: accepted and ignored (files are read whole).
        num_parallel_reads: accepted; files are still read one after another, in order.

    Raises:
        InvalidArgumentError: an unknown ``compression_type``.
        TypeError: ``filenames`` is not strings.
    """

    _reads_files = True

    def __init__(
        self,
        filenames,
        compression_type: str | None = None,
        buffer_size=None,
        num_parallel_reads=None,
        name: str | None = None,
    ) -> None:
        super().__init__((names_dataset(filenames),))
        self._compression = compression_kind(compression_type)

    def _file_names(self) -> list[str]:
        """The files this reader will read, in order (iterates the name dataset)."""
        return [n.item().decode("utf-8") for n in self._input_datasets[0]._iterate()]

    def _compute_element_spec(self) -> Any:
        return TensorSpec([], dtypes.string)

    def _cardinality(self) -> int:
        return UNKNOWN

    def _iterate(self):
        for name in self._input_datasets[0]._iterate():
            lines = read_file(name.item().decode("utf-8"), self._compression).split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            for line in lines:
                if line.endswith(b"\r"):
                    line = line[:-1]
                out = np.empty((), dtype=object)
                out[()] = line
                yield out
