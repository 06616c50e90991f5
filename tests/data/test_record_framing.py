"""CRC-32C (the vector kernel against the byte loop) and the TFRecord framing: round trips,
corruption and truncation as TF 2.21 reports them."""

import random
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdist import errors
from simdist.data import crc32c as crc
from simdist.data.record_framing import frame, split_records
from simdist.summary import event_file


def loop_crc(data: bytes) -> int:
    return crc._loop(data, 0xFFFFFFFF) ^ 0xFFFFFFFF


def test_check_values():
    assert crc.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc.crc32c(b"") == 0
    assert crc.crc32c(b"\x00" * 32) == 0x8A9136AA  # RFC 3720 B.4 test vectors
    assert crc.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc.crc32c(bytes(range(32))) == 0x46DD794E


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 15, 16, 17, 511, 512, 513, 4096, 70001, 1 << 20])
def test_vector_kernel_equals_the_byte_loop(size):
    data = random.Random(size).randbytes(size)
    assert crc.crc32c(data) == loop_crc(data)


@given(st.lists(st.binary(max_size=3000), max_size=30))
def test_many_equals_one_by_one(messages):
    assert crc.crc32c_many(messages).tolist() == [loop_crc(m) for m in messages]


def test_many_with_big_and_tiny_messages():
    rng = random.Random(1)
    messages = [rng.randbytes(n) for n in (0, 2, 4, 100, 100, 100, 100, 70000, 200000)]
    assert crc.crc32c_many(messages).tolist() == [loop_crc(m) for m in messages]


def test_mask_is_tfrecords():
    value = crc.crc32c(b"abc")
    assert crc.masked_crc32c(b"abc") == (((value >> 15) | (value << 17)) + 0xA282EAD8) % 2**32


def test_event_files_share_the_framing():
    assert event_file.tfrecord is frame
    assert event_file.crc32c is crc.crc32c


def test_frame_layout():
    record = frame(b"hello")
    assert record[:8] == struct.pack("<Q", 5)
    assert record[8:12] == struct.pack("<I", crc.masked_crc32c(record[:8]))
    assert record[12:17] == b"hello"
    assert record[17:] == struct.pack("<I", crc.masked_crc32c(b"hello"))


@given(st.lists(st.binary(max_size=700), max_size=20))
def test_split_inverts_frame(records):
    assert list(split_records(b"".join(frame(r) for r in records))) == records


def _three() -> bytes:
    return frame(b"a0") + frame(b"a1") + frame(b"a2")  # 18 bytes each


def _flip(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 1
    return bytes(out)


@pytest.mark.parametrize(
    "at, message",
    [
        (0, "corrupted record at 0 (Is this even a TFRecord file?)"),
        (9, "corrupted record at 0 (Is this even a TFRecord file?)"),
        (12, "corrupted record at 12"),
        (15, "corrupted record at 12"),
        (18, "corrupted record at 18"),
        (18 + 12, "corrupted record at 30"),
        (36 + 3, "corrupted record at 36"),
    ],
)
def test_corrupt_record_at_offset(at, message):
    """TF: the length's checksum is reported at the record's start, the data's 12 bytes on."""
    records = split_records(_flip(_three(), at))
    good = at // 18
    assert [next(records) for _ in range(good)] == [b"a0", b"a1", b"a2"][:good]
    with pytest.raises(errors.DataLossError) as info:
        next(records)
    assert str(info.value) == message


@pytest.mark.parametrize("size", [1, 18 + 5, 18 + 11])
def test_short_header_ends_the_file(size):
    assert list(split_records(_three()[:size])) == [b"a0"][: size // 18]


@pytest.mark.parametrize("size", [18 + 12, 18 + 13, 18 + 14, 18 + 17])
def test_short_data_is_a_truncated_record(size):
    records = split_records(_three()[:size])
    assert next(records) == b"a0"
    with pytest.raises(errors.DataLossError) as info:
        next(records)
    assert str(info.value) == (
        "truncated record at 18' failed with Read less bytes than requested"
    )


def test_huge_length_is_truncated_not_allocated():
    data = struct.pack("<Q", 1 << 40)
    data += struct.pack("<I", crc.masked_crc32c(data)) + b"\x00" * 8
    with pytest.raises(errors.DataLossError, match="truncated record at 0"):
        list(split_records(data))

