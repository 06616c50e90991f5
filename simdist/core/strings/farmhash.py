"""FarmHash ``Fingerprint64`` (farmhashna ``Hash64``): the hash of TF's ``Hashing`` layer.

TensorFlow's ``tf.strings.to_hash_bucket_fast`` (what ``tf.keras.layers.Hashing`` calls)
buckets a string as ``Fingerprint64(bytes) % num_bins``; ``Fingerprint64`` is FarmHash's
``farmhashna::Hash64`` (Geoff Pike, Google; MIT licence), a public algorithm written here
afresh in Python on unsigned 64-bit integers (every product and sum is taken mod 2**64).
The tests compare it with TF's own bucket for thousands of strings.

By length: up to 16 bytes, 17-32, 33-64, and longer (64-byte blocks with two 32-byte
"weak hash" lanes, then the last 64 bytes).
"""

from __future__ import annotations

__all__ = ["fingerprint64"]

_MASK = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _fetch64(data: bytes, i: int) -> int:
    return int.from_bytes(data[i : i + 8], "little")


def _fetch32(data: bytes, i: int) -> int:
    return int.from_bytes(data[i : i + 4], "little")


def _rotate(value: int, shift: int) -> int:
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash_len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _len0to16(data: bytes) -> int:
    n = len(data)
    if n >= 8:
        mul = (_K2 + n * 2) & _MASK
        a = (_fetch64(data, 0) + _K2) & _MASK
        b = _fetch64(data, n - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = (_K2 + n * 2) & _MASK
        a = _fetch32(data, 0)
        return _hash_len16((n + (a << 3)) & _MASK, _fetch32(data, n - 4), mul)
    if n > 0:
        a, b, c = data[0], data[n >> 1], data[n - 1]
        y = (a + (b << 8)) & 0xFFFFFFFF
        z = (n + (c << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _len17to32(data: bytes) -> int:
    n = len(data)
    mul = (_K2 + n * 2) & _MASK
    a = (_fetch64(data, 0) * _K1) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * _K2) & _MASK
    return _hash_len16(
        (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
        (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK,
        mul,
    )


def _len33to64(data: bytes) -> int:
    n = len(data)
    mul = (_K2 + n * 2) & _MASK
    a = (_fetch64(data, 0) * _K2) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & _MASK
    d = (_fetch64(data, n - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash_len16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(data, 16) * mul) & _MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, n - 32)) * mul) & _MASK
    h = ((z + _fetch64(data, n - 24)) * mul) & _MASK
    return _hash_len16(
        (_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
        (e + _rotate((f + a) & _MASK, 18) + g) & _MASK,
        mul,
    )


def _weak32(data: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x = _fetch64(data, i), _fetch64(data, i + 8)
    y, z = _fetch64(data, i + 16), _fetch64(data, i + 24)
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(data: bytes) -> int:
    """FarmHash ``Fingerprint64`` of ``data`` as an unsigned 64-bit int."""
    n = len(data)
    if n <= 16:
        return _len0to16(data)
    if n <= 32:
        return _len17to32(data)
    if n <= 64:
        return _len33to64(data)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v = (0, 0)
    w = (0, 0)
    x = (x * _K2 + _fetch64(data, 0)) & _MASK
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    s = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(data, s + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v[1] + _fetch64(data, s + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(data, s + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * _K1) & _MASK
        v = _weak32(data, s, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak32(data, s + 32, (z + w[1]) & _MASK, (y + _fetch64(data, s + 16)) & _MASK)
        z, x = x, z
        s += 64
        if s == end:
            break
    mul = (_K1 + ((z & 0xFF) << 1)) & _MASK
    s = last64
    w = ((w[0] + ((n - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(data, s + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch64(data, s + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch64(data, s + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak32(data, s, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak32(data, s + 32, (z + w[1]) & _MASK, (y + _fetch64(data, s + 16)) & _MASK)
    z, x = x, z
    return _hash_len16(
        (_hash_len16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _MASK,
        (_hash_len16(v[1], w[1], mul) + x) & _MASK,
        mul,
    )
