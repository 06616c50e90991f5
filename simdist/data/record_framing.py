"""The TFRecord framing: each record's length and data, each followed by its masked CRC-32C.

A TFRecord file (also a TensorBoard event file) is records one after another::

    uint64 length (little-endian) | uint32 masked_crc32c(the 8 length bytes)
    | data (length bytes)         | uint32 masked_crc32c(data)

with ``masked_crc32c`` from :mod:`simdist.data.crc32c`. :func:`frame` writes one record;
:func:`split_records` reads them back from a file's (decompressed) bytes and checks both
checksums, with TensorFlow's ``RecordReader`` outcomes (checked against TF 2.21):

* a length or data checksum that does not match: ``DataLossError("corrupted record at
  <offset>")``, ``<offset>`` the position of what was checked (the record's start for its
  length, 12 bytes further for its data); the file's first length adds "(Is this even a
  TFRecord file?)";
* a file ending inside a record's 12-byte header: the records before it, then the end (TF
  reads a short header as the end of the file);
* a file ending inside a record's data or its checksum: ``DataLossError("truncated record
  at <offset>' failed with Read less bytes than requested")`` (TF's words, stray quote
  included), ``<offset>`` the record's start.

Records before the bad one are still given: the check runs ahead (all checksums of a file in
one vector pass, ``crc32c_many``) but the error is raised where the reader reaches it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import numpy as np

from simdist import errors
from simdist.data.crc32c import crc32c_many, mask_array, masked_crc32c

__all__ = ["HEADER_BYTES", "FOOTER_BYTES", "frame", "split_records"]

HEADER_BYTES = 12  # the length and its checksum
FOOTER_BYTES = 4  # the data's checksum
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")


def frame(data: bytes) -> bytes:
    """``data`` framed as one TFRecord record."""
    length = _LENGTH.pack(len(data))
    return length + _CRC.pack(masked_crc32c(length)) + data + _CRC.pack(masked_crc32c(data))


def _layout(buffer: bytes) -> tuple[list[tuple[int, int]], BaseException | None]:
    """The (start, length) of each whole record, and the error that ends the buffer early
    (a truncated record), or None."""
    records = []
    offset, size = 0, len(buffer)
    while offset < size:
        if size - offset < HEADER_BYTES:
            return records, None  # a short header reads as the end of the file
        (length,) = _LENGTH.unpack_from(buffer, offset)
        if size - offset - HEADER_BYTES < length + FOOTER_BYTES:
            # the data is short; the header's checksum is still checked first
            records.append((offset, -1))
            return records, errors.DataLossError(
                f"truncated record at {offset}' failed with Read less bytes than requested"
            )
        records.append((offset, length))
        offset += HEADER_BYTES + length + FOOTER_BYTES
    return records, None


def _stored(buffer: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The little-endian uint32 at each offset of a uint8 buffer."""
    out = np.zeros(len(offsets), dtype=np.uint32)
    for k in range(4):
        out |= buffer[offsets + k].astype(np.uint32) << np.uint32(8 * k)
    return out


def split_records(buffer: bytes, path: str = "") -> Iterator[bytes]:
    """The records of a TFRecord file's bytes, each checked against its two checksums.

    Args:
        buffer: the file's contents (decompressed).
        path: the file's name, for nothing but the caller's messages.

    Yields:
        Each record's data, in order.

    Raises:
        DataLossError: a checksum does not match, or the last record is cut short (after
            the records before it are given).
    """
    del path  # TF's messages name the offset only
    records, ending = _layout(buffer)
    if not records:
        if ending is not None:
            raise ending
        return
    view = memoryview(buffer)
    array = np.frombuffer(buffer, dtype=np.uint8)
    starts = np.array([start for start, _ in records], dtype=np.int64)
    lengths = np.array([max(n, 0) for _, n in records], dtype=np.int64)
    header_ok = mask_array(crc32c_many([view[o : o + 8] for o in starts.tolist()])) == _stored(
        array, starts + 8
    )
    complete = len(records) - (records[-1][1] < 0)
    datas = [view[o + HEADER_BYTES : o + HEADER_BYTES + n] for o, n in records[:complete]]
    data_ok = mask_array(crc32c_many(datas)) == _stored(
        array, starts[:complete] + HEADER_BYTES + lengths[:complete]
    )
    for index, (start, _) in enumerate(records):
        if not header_ok[index]:
            hint = " (Is this even a TFRecord file?)" if start == 0 else ""
            raise errors.DataLossError(f"corrupted record at {start}{hint}")
        if index == complete:
            break
        if not data_ok[index]:
            raise errors.DataLossError(f"corrupted record at {start + HEADER_BYTES}")
        yield bytes(datas[index])
    if ending is not None:
        raise ending
