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
import gzip
import zlib
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.tensor import Tensor
from simdist.core.tensor_spec import TensorSpec
from simdist.data.dataset import UNKNOWN, Dataset
from simdist.data.sources import TensorSliceDataset

__all__ = ["TextLineDataset", "list_files"]


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
        if isinstance(filenames, Dataset):
            spec = filenames.element_spec
            if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.string:
                raise TypeError(
                    f"`filenames` must be a dataset of scalar tf.string elements, got one "
                    f"with element_spec {spec}."
                )
            names_dataset = filenames
        else:
            names = _as_names(filenames, "`filenames`")
            names_dataset = TensorSliceDataset(
                np.array([n.encode("utf-8") for n in names], dtype=object).reshape(len(names))
            )
        super().__init__((names_dataset,))
        kind = (compression_type or "").upper()
        if kind not in ("", "GZIP", "ZLIB"):
            raise errors.InvalidArgumentError(
                f"Unsupported compression_type: {compression_type!r}. Use None, '', 'GZIP' or "
                "'ZLIB'."
            )
        self._compression = kind

    def _file_names(self) -> list[str]:
        """The files this reader will read, in order (iterates the name dataset)."""
        return [n.item().decode("utf-8") for n in self._input_datasets[0]._iterate()]

    def _compute_element_spec(self) -> Any:
        return TensorSpec([], dtypes.string)

    def _cardinality(self) -> int:
        return UNKNOWN

    def _read(self, path: str) -> bytes:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(f"{path}; No such file or directory") from None
        if self._compression == "GZIP":
            try:
                return gzip.decompress(data)
            except OSError as exc:
                raise errors.DataLossError(f"{path}: not a valid GZIP file ({exc}).") from None
        if self._compression == "ZLIB":
            try:
                return zlib.decompress(data)
            except zlib.error as exc:
                raise errors.DataLossError(f"{path}: not a valid ZLIB stream ({exc}).") from None
        return data

    def _iterate(self):
        for name in self._input_datasets[0]._iterate():
            lines = self._read(name.item().decode("utf-8")).split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            for line in lines:
                if line.endswith(b"\r"):
                    line = line[:-1]
                out = np.empty((), dtype=object)
                out[()] = line
                yield out
