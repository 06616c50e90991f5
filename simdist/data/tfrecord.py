"""TFRecord files: ``tf.io.TFRecordWriter``, ``tf.io.TFRecordOptions``, ``tf.data.TFRecordDataset``.

A TFRecord file is the records framed by :mod:`simdist.data.record_framing`, optionally
compressed as one GZIP or ZLIB stream. The writer writes uncompressed files byte for byte as
TensorFlow's does; compressed files use the same zlib settings as TF's (level
``Z_DEFAULT_COMPRESSION``, ``mem_level`` 9, 15 window bits, +16 for GZIP), so both read each
other's.

``TFRecordDataset`` reads its files at iteration, whole (TF streams them through a buffer):

* without ``num_parallel_reads``, file after file (TF's ``flat_map``);
* with ``num_parallel_reads = n``, TF's deterministic parallel interleave: ``n`` files open
  at a time, one record from each in turn, a file that ends replaced by the next name when
  its turn comes again (as ``Dataset.interleave(cycle_length=n, block_length=1)``);
  ``tf.data.AUTOTUNE`` is ``interleave``'s default cycle (simdist's fixed one, where TF's is
  the machine's core count).

Like ``TextLineDataset``, it keeps the dataset of file names as its only input and sets
``_reads_files``, so FILE auto-sharding (``simdist.distribute.auto_shard``) shards its names.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.tensor import Tensor
from simdist.core.tensor_spec import TensorSpec
from simdist.data.dataset import UNKNOWN, Dataset, as_count
from simdist.data.files import compression_kind, names_dataset, read_file
from simdist.data.functional import DEFAULT_CYCLE_LENGTH
from simdist.data.options import AUTOTUNE
from simdist.data.record_framing import frame, split_records

__all__ = ["TFRecordCompressionType", "TFRecordDataset", "TFRecordOptions", "TFRecordWriter"]


class TFRecordCompressionType:
    """The compression of a TFRecord file (``tf.compat.v1.io.TFRecordCompressionType``)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {TFRecordCompressionType.ZLIB: "ZLIB", TFRecordCompressionType.GZIP: "GZIP",
          TFRecordCompressionType.NONE: ""}  # fmt: skip


class TFRecordOptions:
    """How a TFRecord file is compressed (``tf.io.TFRecordOptions``).

    Args:
        compression_type: ``"GZIP"``, ``"ZLIB"``, ``""`` or ``None`` (none), or a
            ``TFRecordCompressionType`` number.
        flush_mode, input_buffer_size, output_buffer_size, window_bits, compression_level,
        compression_method, mem_level, compression_strategy: zlib's settings, ``None`` for
            TF's defaults (``window_bits`` replaces the GZIP/ZLIB choice of window, as in TF).

    Raises:
        ValueError: an unknown ``compression_type``.
    """

    def __init__(
        self,
        compression_type=None,
        flush_mode=None,
        input_buffer_size=None,
        output_buffer_size=None,
        window_bits=None,
        compression_level=None,
        compression_method=None,
        mem_level=None,
        compression_strategy=None,
    ) -> None:
        self.get_compression_type_string(compression_type)
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """``"GZIP"``, ``"ZLIB"`` or ``""`` for options, a compression type or a string.

        Raises:
            ValueError: not a valid compression type.
        """
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, int) and options in _NAMES:
            return _NAMES[options]
        if isinstance(options, str) and options in _NAMES.values():
            return options
        raise ValueError(f'Not a valid compression_type: "{options}"')

    def __repr__(self) -> str:
        return f"TFRecordOptions(compression_type={self.compression_type!r})"

    def _compressor(self):
        kind = self.get_compression_type_string(self)
        if not kind:
            return None
        window = self.window_bits if self.window_bits is not None else 15
        if kind == "GZIP" and self.window_bits is None:
            window += 16
        return zlib.compressobj(
            -1 if self.compression_level is None else self.compression_level,
            zlib.DEFLATED if self.compression_method is None else self.compression_method,
            window,
            9 if self.mem_level is None else self.mem_level,
            zlib.Z_DEFAULT_STRATEGY
            if self.compression_strategy is None
            else self.compression_strategy,
        )


class TFRecordWriter:
    """Writes records to a TFRecord file (``tf.io.TFRecordWriter``); a context manager.

    >>> import os, tempfile, simdist as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     writer.write(b"first")
    ...     writer.write(b"second")
    >>> [r.numpy() for r in tf.data.TFRecordDataset(path)]
    [b'first', b'second']

    Args:
        path: the file (created, or truncated).
        options: a ``TFRecordOptions``, a compression type string or number, or None.

    Raises:
        NotFoundError: the file's directory does not exist.
        ValueError: an unknown compression type.
    """

    def __init__(self, path, options=None) -> None:
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(compression_type=options)
        self._path = os.fsdecode(path)
        self._compressor = options._compressor()
        try:
            self._file = open(self._path, "wb")
        except FileNotFoundError:
            raise errors.NotFoundError(f"{self._path}; No such file or directory") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(f"{self._path}; Is a directory") from None

    def write(self, record) -> None:
        """Append one record (bytes, or a str written as UTF-8).

        Raises:
            FailedPreconditionError: the writer is closed.
            TypeError: ``record`` is not bytes or str.
        """
        if isinstance(record, str):
            record = record.encode("utf-8")
        if isinstance(record, (bytearray, memoryview)):
            record = bytes(record)
        if not isinstance(record, bytes):
            raise TypeError(f"write() takes bytes or str, got {type(record).__name__}.")
        data = frame(record)
        self._open_file().write(self._compressor.compress(data) if self._compressor else data)

    def flush(self) -> None:
        """Write what is buffered to the file."""
        file = self._open_file()
        if self._compressor is not None:
            file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        file.flush()

    def close(self) -> None:
        """Finish the file (the end of a compressed stream) and close it; closing twice is
        allowed."""
        if self._file is None:
            return
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_FINISH))
        self._file.close()
        self._file = None

    def _open_file(self):
        if self._file is None:
            raise errors.FailedPreconditionError("Writer is closed.")
        return self._file

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


class TFRecordDataset(Dataset):
    """The records of TFRecord files, as scalar strings (``tf.data.TFRecordDataset``).

    Args:
        filenames: a file name, a list of them, a string tensor, or a dataset of strings.
        compression_type: ``None``/``""``, ``"GZIP"`` or ``"ZLIB"``.
        buffer_size: accepted (any number, as TF); files are read whole.
        num_parallel_reads: ``None`` (one file after another), a count of files read in
            turn, one record each (see the module docstring), or ``tf.data.AUTOTUNE``.

    Raises:
        InvalidArgumentError: a ``compression_type`` other than those (TF reads the file as
            uncompressed: see docs/differences.md); ``num_parallel_reads`` < 1.
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
        if compression_type not in (None, "", "GZIP", "ZLIB"):
            raise errors.InvalidArgumentError(
                f"Unsupported compression_type: {compression_type!r}. Use None, '', 'GZIP' or "
                "'ZLIB' (TensorFlow would read the file as uncompressed)."
            )
        self._compression = compression_kind(compression_type)
        cycle = None
        if num_parallel_reads is not None:
            cycle = as_count(num_parallel_reads, "num_parallel_reads")
            if cycle == AUTOTUNE:
                cycle = DEFAULT_CYCLE_LENGTH
            elif cycle <= 0:
                raise errors.InvalidArgumentError("`cycle_length` must be > 0")
        self._cycle_length = cycle

    def _file_names(self) -> list[str]:
        """The files this reader will read, in the order of its names (iterates them)."""
        return [_name(n) for n in self._input_datasets[0]._iterate()]

    def _compute_element_spec(self) -> Any:
        return TensorSpec([], dtypes.string)

    def _cardinality(self) -> int:
        return UNKNOWN

    def _records(self, name: np.ndarray) -> Iterator[np.ndarray]:
        path = _name(name)
        for record in split_records(read_file(path, self._compression), path):
            out = np.empty((), dtype=object)
            out[()] = record
            yield out

    def _iterate(self) -> Iterator[np.ndarray]:
        names = self._input_datasets[0]._iterate()
        if self._cycle_length is None:
            for name in names:
                yield from self._records(name)
            return
        slots: list = [None] * self._cycle_length
        open_count, index, names_done = 0, 0, False
        while not names_done or open_count:
            if slots[index] is None and not names_done:
                name = next(names, None)
                if name is None:
                    names_done = True
                    continue
                slots[index] = self._records(name)
                open_count += 1
            if slots[index] is not None:
                record = next(slots[index], None)
                if record is None:
                    slots[index] = None
                    open_count -= 1
                else:
                    yield record
            index = (index + 1) % self._cycle_length


def _name(element: Any) -> str:
    value = element.item() if isinstance(element, np.ndarray) else element
    if isinstance(value, Tensor):
        value = value.numpy()
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
