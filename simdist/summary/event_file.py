"""TensorBoard event files, written byte for byte as TensorFlow writes them.

An event file is a sequence of TFRecord records::

    uint64 length (little-endian) | uint32 masked_crc32c(length bytes)
    | data (length bytes)         | uint32 masked_crc32c(data)

with the framing and the masked CRC-32C that TFRecord files use (one implementation for
both: ``simdist.data.record_framing``, ``simdist.data.crc32c``). Each record's data is a
serialized ``tensorflow.Event`` protocol buffer; this module encodes the few messages it
needs by hand (field numbers from tensorflow/core/util/event.proto,
core/framework/summary.proto, tensor.proto):

* ``Event``: wall_time = 1 (double), step = 2 (int64), file_version = 3 (string),
  summary = 5 (Summary), source_metadata = 10 (SourceMetadata: writer = 1);
* ``Summary``: value = 1 (repeated Value); ``Value``: tag = 1, tensor = 8 (TensorProto),
  metadata = 9 (SummaryMetadata: plugin_data = 1 (PluginData: plugin_name = 1, content = 2));
* ``TensorProto``: dtype = 1 (enum), tensor_shape = 2 (TensorShapeProto: dim = 2 (size = 1)),
  tensor_content = 4 (the values' little-endian bytes), string_val = 8.

The first record of a file is the version event (``brain.Event:2``), stamped with the whole
seconds of the file's creation, as TensorFlow's ``EventsWriter`` does; fields holding their
default (a step of 0, empty strings) are left out, as proto3 encoders do.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

import numpy as np

from simdist.data import tensor_io
from simdist.data.crc32c import crc32c, masked_crc32c
from simdist.data.record_framing import frame as tfrecord

__all__ = [
    "EventFileWriter",
    "masked_crc32c",
    "crc32c",
    "tfrecord",
    "encode_event",
    "tensor_proto",
    "summary_metadata",
    "summary_value",
]

# --- protocol-buffer encoding -------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values: ten-byte two's complement, as protobuf
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint((field << 3) | wire_type)


def _bytes_field(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def _varint_field(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(value) if value else b""


def tensor_proto(value) -> bytes:
    """A serialized ``TensorProto`` for a NumPy array (numbers) or a string array, as
    ``tf.io.serialize_tensor`` writes it (``simdist.data.tensor_io``).

    Raises:
        TypeError: a dtype a TensorProto here cannot hold.
    """
    array = np.asarray(value)
    try:
        return tensor_io.tensor_proto(array)
    except TypeError:
        raise TypeError(f"Cannot write a tensor of dtype {array.dtype} to a summary.") from None


def summary_metadata(
    plugin_name: str, content: bytes = b"", description: str = "", data_class: int = 0
) -> bytes:
    """A serialized ``SummaryMetadata``: plugin_data = 1, summary_description = 3,
    data_class = 4 (1: scalar, 2: tensor, 3: blob sequence)."""
    plugin = _bytes_field(1, plugin_name.encode())
    if content:
        plugin += _bytes_field(2, content)
    out = _bytes_field(1, plugin)
    if description:
        out += _bytes_field(3, description.encode("utf-8"))
    return out + _varint_field(4, data_class)


def summary_value(tag: str, tensor: bytes, metadata: bytes) -> bytes:
    """A serialized ``Summary`` holding one ``Value`` (tag, tensor, metadata)."""
    value = _bytes_field(1, tag.encode("utf-8")) + _bytes_field(8, tensor)
    return _bytes_field(1, value + _bytes_field(9, metadata))


def encode_event(
    wall_time: float, step: int = 0, summary: bytes | None = None, file_version: str = ""
) -> bytes:
    """A serialized ``Event``."""
    out = _key(1, 1) + struct.pack("<d", wall_time) + _varint_field(2, int(step))
    if file_version:
        out += _bytes_field(3, file_version.encode())
        out += _bytes_field(10, _bytes_field(1, b"tensorflow.core.util.events_writer"))
    if summary is not None:
        out += _bytes_field(5, summary)
    return out


# --- the file -----------------------------------------------------------------------------
_COUNTER = [0]
_COUNTER_LOCK = threading.Lock()


class EventFileWriter:
    """Appends events to ``<logdir>/events.out.tfevents.<secs>.<host>.<pid>.<n>.v2``.

    Records are buffered and written on :meth:`flush` (and when ``max_queue`` events are
    waiting); the file is created, with its version event, when the writer is.

    Raises:
        OSError: ``logdir`` cannot be created or written.
    """

    def __init__(self, logdir: str, max_queue: int = 10, filename_suffix: str = ".v2") -> None:
        os.makedirs(logdir, exist_ok=True)
        now = time.time()
        with _COUNTER_LOCK:
            number = _COUNTER[0]
            _COUNTER[0] += 1
        name = (
            f"events.out.tfevents.{int(now)}.{socket.gethostname()}.{os.getpid()}.{number}"
            f"{filename_suffix}"
        )
        self.path = os.path.join(logdir, name)
        self._max_queue = max(1, int(max_queue))
        self._pending: list[bytes] = []
        self._lock = threading.Lock()
        self._closed = False
        with open(self.path, "wb") as f:
            f.write(tfrecord(encode_event(float(int(now)), file_version="brain.Event:2")))

    def add_event(self, event: bytes) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"The event file writer of '{self.path}' is closed.")
            self._pending.append(tfrecord(event))
            full = len(self._pending) >= self._max_queue
        if full:
            self.flush()

    def flush(self) -> None:
        """Write the buffered events to the file."""
        with self._lock:
            pending, self._pending = self._pending, []
            if pending:
                with open(self.path, "ab") as f:
                    f.write(b"".join(pending))

    def close(self) -> None:
        """Flush and refuse further events."""
        self.flush()
        with self._lock:
            self._closed = True
