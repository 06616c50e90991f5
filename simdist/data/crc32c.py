"""CRC-32C (Castagnoli), fast enough for datasets: slicing-by-16 across many chunks in NumPy.

The checksum TFRecord files (and TensorBoard event files) carry is CRC-32C: polynomial
``0x1EDC6F41``, bits reflected (``0x82F63B78``), register started at ``0xFFFFFFFF`` and
inverted at the end. A byte-at-a-time loop in Python runs at a few MB/s; this module gets
NumPy's speed from three facts of a CRC:

* **Linearity.** Let ``raw(D)`` be the register after feeding ``D`` into a register that
  starts at 0. Then ``raw`` is linear over GF(2), leading zero bytes leave it 0, and the real
  checksum is ``raw(D') ^ 0xFFFFFFFF`` where ``D'`` is ``D`` with its first four bytes
  inverted (that is the start value ``0xFFFFFFFF`` moved into the data). So a buffer
  left-padded with zeros to ``k * L`` bytes and cut into ``k`` rows of ``L`` bytes has
  ``raw = Z(raw(row 0)) ^ raw(row 1)`` chained row by row, where ``Z`` advances a register
  over ``L`` zero bytes (a 32 x 32 bit matrix, applied with four 256-entry tables).
* **Slicing-by-16.** Sixteen bytes ``b0..b15`` update a register ``c`` to
  ``T15[x0] ^ T14[x1] ^ T13[x2] ^ T12[x3] ^ T11[b4] ^ ... ^ T0[b15]`` where ``x0..x3`` are
  the bytes of ``c ^ (b0..b3)`` and ``Tj`` advances a byte over ``j`` more zero bytes. The
  twelve lookups of ``b4..b15`` do not depend on ``c``: they are done for the whole buffer
  at once; the loop over a row's 16-byte groups does the four that do, for all ``k`` rows in
  one vector operation.
* **Rows of different messages.** :func:`crc32c_many` puts several messages (records) in
  the rows, each left-padded to the row length, and returns every message's checksum.

Short messages (under ``_SMALL`` bytes) take the plain table loop, which is faster there.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

__all__ = ["crc32c", "crc32c_many", "mask", "mask_array", "masked_crc32c"]

_POLY = 0x82F63B78
_SLICES = 16
_SMALL = 512  # below this many bytes the Python loop beats the vector set-up


def _byte_table() -> np.ndarray:
    table = np.zeros(256, dtype=np.uint32)
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table[byte] = crc
    return table


def _slice_tables() -> np.ndarray:
    """``tables[j][b]``: byte ``b`` fed into a zero register, then ``j`` zero bytes."""
    tables = np.zeros((_SLICES, 256), dtype=np.uint32)
    tables[0] = _byte_table()
    for j in range(1, _SLICES):
        previous = tables[j - 1]
        tables[j] = (previous >> np.uint32(8)) ^ tables[0][previous & np.uint32(0xFF)]
    return tables


_TABLES = _slice_tables()
_TABLE0 = [int(v) for v in _TABLES[0]]


def _loop(data: bytes | memoryview, crc: int = 0) -> int:
    """The register after feeding ``data`` into ``crc``, a byte at a time."""
    table = _TABLE0
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


def _zeros_operator(count: int) -> list[int]:
    """The images of the 32 register bits after ``count`` zero bytes (a GF(2) matrix)."""
    one_byte = [_loop(b"\x00", 1 << bit) for bit in range(32)]

    def apply(matrix: list[int], value: int) -> int:
        out, bit = 0, 0
        while value:
            if value & 1:
                out ^= matrix[bit]
            value >>= 1
            bit += 1
        return out

    result = [1 << bit for bit in range(32)]  # identity
    power = one_byte
    while count:
        if count & 1:
            result = [apply(power, v) for v in result]
        count >>= 1
        if count:
            power = [apply(power, v) for v in power]
    return result


@functools.lru_cache(maxsize=32)
def _zeros_tables(count: int) -> tuple[list[int], ...]:
    """Four 256-entry tables applying :func:`_zeros_operator` a byte of the register at a time."""
    matrix = _zeros_operator(count)
    tables = []
    for position in range(4):
        table = []
        for byte in range(256):
            out = 0
            for bit in range(8):
                if byte >> bit & 1:
                    out ^= matrix[8 * position + bit]
            table.append(out)
        tables.append(table)
    return tuple(tables)


@functools.cache
def _pair_tables() -> np.ndarray:
    """``pairs[p][v]``: the lookups of bytes ``2p`` and ``2p + 1`` of a group at once, for
    the little-endian 16-bit value ``v`` of the two (eight tables of 65536 entries, 2 MiB,
    made at the first vectorised call: 5.6 ms that a process which never frames a record
    does not pay at import)."""
    values = np.arange(65536, dtype=np.uint32)
    low, high = values & np.uint32(0xFF), values >> np.uint32(8)
    return np.stack(
        [_TABLES[_SLICES - 1 - 2 * p][low] ^ _TABLES[_SLICES - 2 - 2 * p][high] for p in range(8)]
    )


def _raw_rows(rows: np.ndarray) -> np.ndarray:
    """The raw register (start 0, no final inversion) of each row of a (k, L) uint8 array,
    ``L`` a multiple of 16."""
    count, length = rows.shape
    rows = np.ascontiguousarray(rows)
    halves = rows.view("<u2").reshape(count, length // _SLICES, 8).transpose(1, 0, 2)
    # the twelve register-independent lookups of every group (bytes 4..15), XOR-ed together
    pairs = _pair_tables()
    fixed = pairs[2][halves[:, :, 2]]
    for pair in range(3, 8):
        fixed ^= pairs[pair][halves[:, :, pair]]
    heads = rows.view("<u4").reshape(count, length // _SLICES, 4)[:, :, 0].T.copy()  # (g, k)
    first, second = pairs[0], pairs[1]
    crc = np.zeros(count, dtype=np.uint32)
    low16, shift16 = np.uint32(0xFFFF), np.uint32(16)
    for head, rest in zip(heads, fixed, strict=True):
        x = crc ^ head
        crc = first[x & low16] ^ second[x >> shift16] ^ rest
    return crc


def _row_length(size: int) -> int:
    """A row length (a power of two, multiple of 16) balancing loop length and row count."""
    length = 256
    while length * length < size * 32 and length < 65536:
        length *= 2
    return length


def crc32c(data: bytes | bytearray | memoryview) -> int:
    """The CRC-32C of ``data``.

    >>> hex(crc32c(b"123456789"))  # the standard check value
    '0xe3069283'
    """
    size = len(data)
    if size < _SMALL:
        return _loop(data, 0xFFFFFFFF) ^ 0xFFFFFFFF
    length = _row_length(size)
    count = -(-size // length)
    padded = np.zeros(count * length, dtype=np.uint8)
    start = count * length - size
    padded[start:] = np.frombuffer(data, dtype=np.uint8)
    padded[start : start + 4] ^= np.uint8(0xFF)
    rows = _raw_rows(padded.reshape(count, length))
    t0, t1, t2, t3 = _zeros_tables(length)
    crc = 0
    for row in rows.tolist():
        crc = t0[crc & 0xFF] ^ t1[(crc >> 8) & 0xFF] ^ t2[(crc >> 16) & 0xFF] ^ t3[crc >> 24]
        crc ^= row
    return crc ^ 0xFFFFFFFF


def crc32c_many(messages: Sequence[bytes]) -> np.ndarray:
    """The CRC-32C of each message, computed together (one vector loop per size class), as
    a uint32 array.

    Messages are grouped by the power of two at or above their size, so padding never
    more than doubles the work; each group is laid into its rows with one masked copy. Big
    messages (over 64 KiB) and lone medium ones go through :func:`crc32c` one by one.
    """
    out = np.zeros(len(messages), dtype=np.uint32)
    classes: dict[int, list[int]] = {}
    for index, message in enumerate(messages):
        size = len(message)
        if size < 4 or size > 65536:
            out[index] = crc32c(message)
        else:
            classes.setdefault(max(_SLICES, 1 << (size - 1).bit_length()), []).append(index)
    for length, indices in sorted(classes.items()):
        if len(indices) < 4 and length >= _SMALL:
            for index in indices:
                out[index] = crc32c(messages[index])
            continue
        group = [messages[i] for i in indices]
        sizes = np.fromiter((len(m) for m in group), dtype=np.int64, count=len(group))
        flat = np.frombuffer(b"".join(group), dtype=np.uint8)
        pads = length - sizes
        rows = np.zeros((len(group), length), dtype=np.uint8)
        # each message fills the end of its row: in row-major order, exactly `flat`
        rows[np.arange(length) >= pads[:, None]] = flat
        every = np.arange(len(group))
        for k in range(4):  # the start value 0xFFFFFFFF, moved into the data
            rows[every, pads + k] ^= np.uint8(0xFF)
        out[np.asarray(indices)] = _raw_rows(rows) ^ np.uint32(0xFFFFFFFF)
    return out


def mask_array(crcs: np.ndarray) -> np.ndarray:
    """:func:`mask` of each uint32 CRC."""
    crcs = crcs.astype(np.uint32)
    return ((crcs >> np.uint32(15)) | (crcs << np.uint32(17))) + np.uint32(0xA282EAD8)


def mask(crc: int) -> int:
    """TFRecord's masking of a CRC: rotate right by 15 bits, add ``0xa282ead8`` (mod 2**32)."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def masked_crc32c(data: bytes | bytearray | memoryview) -> int:
    """The masked CRC-32C that TFRecord stores after a record's length and after its data."""
    return mask(crc32c(data))
