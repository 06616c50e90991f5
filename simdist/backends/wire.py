"""The wire format of worker messages: plain values and NumPy arrays as bytes, never pickle.

Workers started one per ``TF_CONFIG`` talk over sockets, and a byte string that arrives on a
socket is data, never code: unpickling it would let whoever reaches the port run anything
in the worker. So every message is encoded by :func:`encode` into

    b"SDW1" | uint32 big-endian header length | header (JSON, UTF-8) | the arrays' raw bytes

The header is a JSON tree of the value, in which every container is tagged so that the
decoder rebuilds exactly the types that were sent (a tuple stays a tuple, so tags compared
on two workers compare equal):

* ``None``, ``bool``, ``int``, ``float`` (NaN, inf and -0.0 included), ``str``: themselves;
* ``["t", [items]]`` a tuple, ``["l", [items]]`` a list, ``["d", [[key, value], ...]]`` a
  dict (keys of any encodable type, in insertion order);
* ``["a", dtype, shape, blob]`` an ndarray, ``["s", dtype, blob]`` a NumPy scalar,
  ``["b", blob]`` bytes: ``dtype`` is NumPy's ``dtype.str`` (``"<f4"``; numeric and bool
  kinds only), ``blob`` the index of the raw bytes after the header, whose lengths the
  header lists under ``"sizes"``.

:func:`decode` checks every tag, dtype, shape and length and raises ``ValueError`` on
anything else; values of other types cannot be encoded (``TypeError``).

>>> import numpy as np
>>> value = ("all_reduce", "SUM", (2, 3), np.arange(3, dtype=np.float32))
>>> back = decode(encode(value))
>>> back[:3], back[3].dtype, back[3].tolist()
(('all_reduce', 'SUM', (2, 3)), dtype('float32'), [0.0, 1.0, 2.0])
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import numpy as np

__all__ = ["encode", "decode", "MAGIC"]

MAGIC = b"SDW1"
_HEADER = struct.Struct(">I")
_MAX_DEPTH = 64  # nesting a worker's messages never approach; bounds the decoder's recursion
_KINDS = frozenset("biufc")  # bool, signed and unsigned ints, floats, complex


def encode(value: Any) -> bytes:
    """``value`` as the bytes of one message (see the module docstring).

    Raises:
        TypeError: a value (or a part of it) of a type the wire cannot carry, such as an
            object array or an arbitrary class instance.
    """
    blobs: list[bytes] = []
    tree = _encode(value, blobs, 0)
    header = json.dumps(
        {"tree": tree, "sizes": [len(b) for b in blobs]}, separators=(",", ":")
    ).encode("utf-8")
    return b"".join([MAGIC, _HEADER.pack(len(header)), header, *blobs])


def _encode(value: Any, blobs: list[bytes], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise TypeError(f"a message nested deeper than {_MAX_DEPTH} levels cannot be sent")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, np.generic):
        return value
    if isinstance(value, float) and not isinstance(value, np.generic):
        return value if math.isfinite(value) else ["f", repr(value)]
    if isinstance(value, tuple):
        return ["t", [_encode(v, blobs, depth + 1) for v in value]]
    if isinstance(value, list):
        return ["l", [_encode(v, blobs, depth + 1) for v in value]]
    if isinstance(value, dict):
        return [
            "d",
            [
                [_encode(k, blobs, depth + 1), _encode(v, blobs, depth + 1)]
                for k, v in value.items()
            ],
        ]
    if isinstance(value, (bytes, bytearray)):
        blobs.append(bytes(value))
        return ["b", len(blobs) - 1]
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in _KINDS:
            raise TypeError(
                f"arrays of dtype {array.dtype} cannot be sent between workers (numeric and "
                "bool dtypes only)"
            )
        blobs.append(np.ascontiguousarray(array).tobytes())
        if isinstance(value, np.generic):
            return ["s", array.dtype.str, len(blobs) - 1]
        return ["a", array.dtype.str, list(array.shape), len(blobs) - 1]
    raise TypeError(
        f"a {type(value).__name__} cannot be sent between workers: messages hold None, bool, "
        "int, float, str, bytes, tuples, lists, dicts and NumPy arrays only (no pickling)"
    )


def decode(data: bytes | bytearray | memoryview) -> Any:
    """The value that :func:`encode` turned into ``data``.

    Raises:
        ValueError: ``data`` is not a well-formed message (wrong magic, a truncated or
            malformed header, an unknown tag or dtype, lengths that do not add up).
    """
    view = memoryview(data).cast("B")
    if len(view) < len(MAGIC) + _HEADER.size or bytes(view[: len(MAGIC)]) != MAGIC:
        raise ValueError("not a simdist worker message (bad magic bytes)")
    (length,) = _HEADER.unpack_from(view, len(MAGIC))
    start = len(MAGIC) + _HEADER.size
    if start + length > len(view):
        raise ValueError("a truncated worker message (the header runs past the end)")
    try:
        header = json.loads(bytes(view[start : start + length]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"a worker message with a malformed header: {exc}") from None
    if not isinstance(header, dict) or not isinstance(header.get("sizes"), list):
        raise ValueError("a worker message whose header is not {'tree', 'sizes'}")
    sizes = header["sizes"]
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes):
        raise ValueError("a worker message with bad blob sizes")
    offsets, offset = [], start + length
    for size in sizes:
        offsets.append((offset, offset + size))
        offset += size
    if offset != len(view):
        raise ValueError(
            f"a worker message of {len(view)} bytes whose header describes {offset} bytes"
        )
    blobs = [view[a:b] for a, b in offsets]
    return _decode(header.get("tree"), blobs, 0)


def _blob(blobs: list, index: Any) -> memoryview:
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(blobs):
        raise ValueError(f"a worker message refers to a missing blob {index!r}")
    return blobs[index]


def _dtype(code: Any) -> np.dtype:
    try:
        dtype = np.dtype(code) if isinstance(code, str) else None
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in _KINDS or dtype.str != code:
        raise ValueError(f"a worker message with an unsupported dtype {code!r}")
    return dtype


def _decode(node: Any, blobs: list, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError(f"a worker message nested deeper than {_MAX_DEPTH} levels")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, list) or not node or not isinstance(node[0], str):
        raise ValueError(f"a worker message with a malformed value {str(node)[:80]!r}")
    tag, args = node[0], node[1:]
    if tag in ("t", "l") and len(args) == 1 and isinstance(args[0], list):
        items = [_decode(v, blobs, depth + 1) for v in args[0]]
        return tuple(items) if tag == "t" else items
    if tag == "d" and len(args) == 1 and isinstance(args[0], list):
        out = {}
        for pair in args[0]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError("a worker message with a malformed dict entry")
            out[_decode(pair[0], blobs, depth + 1)] = _decode(pair[1], blobs, depth + 1)
        return out
    if tag == "f" and len(args) == 1 and args[0] in ("nan", "inf", "-inf"):
        return float(args[0])
    if tag == "b" and len(args) == 1:
        return bytes(_blob(blobs, args[0]))
    if tag == "s" and len(args) == 2:
        dtype, raw = _dtype(args[0]), _blob(blobs, args[1])
        if len(raw) != dtype.itemsize:
            raise ValueError(f"a {dtype} scalar of {len(raw)} bytes in a worker message")
        return np.frombuffer(raw, dtype=dtype)[0]
    if tag == "a" and len(args) == 3 and isinstance(args[1], list):
        dtype, shape, raw = _dtype(args[0]), args[1], _blob(blobs, args[2])
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise ValueError(f"a worker message with a bad array shape {shape!r}")
        if len(raw) != math.prod(shape) * dtype.itemsize:
            raise ValueError(
                f"a {dtype} array of shape {tuple(shape)} needs "
                f"{math.prod(shape) * dtype.itemsize} bytes, the message holds {len(raw)}"
            )
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    raise ValueError(f"a worker message with an unknown value tag {tag!r}")
