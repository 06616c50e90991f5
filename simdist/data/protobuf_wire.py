"""The protocol-buffer wire format: varints, keys, length-delimited fields, and a field reader.

A message is a sequence of fields, each a key ``(field_number << 3) | wire_type`` (a varint)
and a value: wire type 0 a varint, 1 eight little-endian bytes, 2 a varint length and that
many bytes, 5 four little-endian bytes. A negative int64 is a ten-byte varint (two's
complement). Repeated numbers are written *packed* (one length-delimited field holding the
values back to back, proto3's default, as protobuf does for ``FloatList`` and ``Int64List``);
a reader accepts them packed or one field per value.

simdist writes and reads the few messages it needs with these functions; it does not depend
on the ``protobuf`` package.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from simdist import errors

__all__ = [
    "VARINT",
    "FIXED64",
    "LENGTH",
    "FIXED32",
    "varint",
    "key",
    "length_field",
    "varint_field",
    "packed_varints",
    "packed_floats",
    "read_fields",
    "read_varint",
    "unpack_varints",
    "unpack_floats",
]

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_UINT64 = (1 << 64) - 1


def varint(value: int) -> bytes:
    """``value`` as a base-128 varint (negative numbers as 64-bit two's complement)."""
    value &= _UINT64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


def length_field(field: int, payload: bytes) -> bytes:
    """A length-delimited field (bytes, strings, sub-messages, packed numbers)."""
    return key(field, LENGTH) + varint(len(payload)) + payload


def varint_field(field: int, value: int) -> bytes:
    """A varint field, left out when ``value`` is 0 (proto3's default)."""
    return key(field, VARINT) + varint(value) if value else b""


def packed_varints(values) -> bytes:
    """int64 values back to back, as a packed field's payload."""
    return b"".join(varint(int(v)) for v in values)


def packed_floats(values) -> bytes:
    """float32 values back to back (little-endian), as a packed field's payload."""
    return np.asarray(values, dtype="<f4").tobytes()


def read_varint(data: bytes | memoryview, offset: int) -> tuple[int, int]:
    """The varint at ``offset`` and the offset after it.

    Raises:
        DataLossError: the data ends inside the varint, or it is longer than ten bytes.
    """
    result, shift = 0, 0
    while True:
        if offset >= len(data):
            raise errors.DataLossError("Truncated message: a varint runs past the end.")
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & _UINT64, offset
        shift += 7
        if shift >= 70:
            raise errors.DataLossError("Malformed message: a varint is longer than 10 bytes.")


def read_fields(data: bytes | memoryview) -> Iterator[tuple[int, int, object]]:
    """Each field of a message as ``(number, wire_type, value)``: an int for varints, the
    raw little-endian bytes for fixed64/fixed32, a memoryview for length-delimited fields.

    Raises:
        DataLossError: the data is not a well-formed message.
    """
    view = memoryview(data)
    offset, size = 0, len(view)
    while offset < size:
        tag, offset = read_varint(view, offset)
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            raise errors.DataLossError("Malformed message: a field number of 0.")
        if wire_type == VARINT:
            value, offset = read_varint(view, offset)
        elif wire_type in (FIXED64, FIXED32):
            width = 8 if wire_type == FIXED64 else 4
            if offset + width > size:
                raise errors.DataLossError("Truncated message: a fixed field runs past the end.")
            value, offset = bytes(view[offset : offset + width]), offset + width
        elif wire_type == LENGTH:
            length, offset = read_varint(view, offset)
            if offset + length > size:
                raise errors.DataLossError(
                    "Truncated message: a length-delimited field runs past the end."
                )
            value, offset = view[offset : offset + length], offset + length
        else:
            raise errors.DataLossError(f"Malformed message: wire type {wire_type} is not known.")
        yield number, wire_type, value


def as_int64(value: int) -> int:
    """A varint's 64 bits read as a signed int64."""
    return value - (1 << 64) if value >> 63 else value


def unpack_varints(payload: bytes | memoryview) -> list[int]:
    """The signed int64 values of a packed field's payload."""
    values, offset = [], 0
    while offset < len(payload):
        value, offset = read_varint(payload, offset)
        values.append(as_int64(value))
    return values


def unpack_floats(payload: bytes | memoryview) -> list[float]:
    """The float32 values of a packed field's payload (as Python floats).

    Raises:
        DataLossError: the payload is not a whole number of floats.
    """
    if len(payload) % 4:
        raise errors.DataLossError("Malformed message: a packed float field of odd length.")
    return np.frombuffer(payload, dtype="<f4").tolist()
