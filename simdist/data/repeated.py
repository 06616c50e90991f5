"""The containers of protocol-buffer fields: checked repeated scalars, repeated messages, maps.

As protobuf's Python containers (upb's, with their messages): a repeated field is list-like
but checks every value it takes (``TypeError`` for the wrong type, ``ValueError`` for an
int64 out of range) and keeps
floats as float32; a map of messages makes an entry on first read and refuses direct
assignment of a message. Each container tells its message when it changes (``notify``), so
that a sub-message counts as set once something in it is.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

__all__ = [
    "MessageMapContainer",
    "RepeatedCompositeContainer",
    "RepeatedScalarContainer",
    "map_order",
    "text_bytes",
    "text_string",
]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _check_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return bytes(value)
    raise TypeError(f"expected bytes, {type(value).__name__} found")


def _check_float(value: Any) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, (str, bytes)):
        return float(np.float32(value))
    raise TypeError(f"must be real number, not {type(value).__name__}")


def _check_int64(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("Field tensorflow.Int64List.value: Expected an int, got a boolean.")
    if not hasattr(value, "__index__"):
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
    number = int(value.__index__())
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise ValueError(f"Value out of range: {number}")
    return number


_CHECKS = {"bytes": _check_bytes, "float": _check_float, "int64": _check_int64}


class RepeatedScalarContainer:
    """A repeated ``bytes``, ``float`` or ``int64`` field (protobuf's class of that name)."""

    __slots__ = ("_items", "_check", "_notify")

    def __init__(self, kind: str, notify: Callable[[], None]) -> None:
        self._items: list = []
        self._check = _CHECKS[kind]
        self._notify = notify

    def append(self, value: Any) -> None:
        self._items.append(self._check(value))
        self._notify()

    def extend(self, values: Iterable) -> None:
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise TypeError(f"Value must be iterable, got {type(values).__name__}.")
        checked = [self._check(v) for v in values]
        self._items.extend(checked)
        self._notify()

    def insert(self, index: int, value: Any) -> None:
        self._items.insert(index, self._check(value))
        self._notify()

    def pop(self, index: int = -1) -> Any:
        return self._items.pop(index)

    def remove(self, value: Any) -> None:
        self._items.remove(value)

    def __setitem__(self, index, value) -> None:
        if isinstance(index, slice):
            self._items[index] = [self._check(v) for v in value]
        else:
            self._items[index] = self._check(value)
        self._notify()

    def __delitem__(self, index) -> None:
        del self._items[index]

    def __getitem__(self, index):
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator:
        return iter(self._items)

    def __contains__(self, value: object) -> bool:
        return value in self._items

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RepeatedScalarContainer):
            return self._items == other._items
        if isinstance(other, (list, tuple)):
            return self._items == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._items)


class RepeatedCompositeContainer:
    """A repeated message field (protobuf's class of that name)."""

    __slots__ = ("_items", "_cls", "_notify")

    def __init__(self, cls: type, notify: Callable[[], None]) -> None:
        self._items: list = []
        self._cls = cls
        self._notify = notify

    def add(self, **kwargs: Any):
        """A new message at the end (keyword arguments as the message's constructor)."""
        item = self._cls(**kwargs)
        object.__setattr__(item, "_parent", self._notify)
        self._items.append(item)
        self._notify()
        return item

    def append(self, value: Any) -> None:
        if isinstance(value, dict):
            value = self._cls(**value)
        if not isinstance(value, self._cls):
            raise TypeError(
                f"Parameter to append() must be instance of {self._cls.__name__}, got "
                f"{type(value).__name__}."
            )
        self.add().CopyFrom(value)

    def extend(self, values: Iterable) -> None:
        for value in values:
            self.append(value)
        self._notify()

    def __getitem__(self, index):
        return self._items[index]

    def __delitem__(self, index) -> None:
        del self._items[index]

    def pop(self, index: int = -1):
        return self._items.pop(index)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RepeatedCompositeContainer):
            return self._items == other._items
        if isinstance(other, (list, tuple)):
            return self._items == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._items)


def _map_key(key: Any) -> str:
    if isinstance(key, bytes):
        return key.decode("utf-8")
    if isinstance(key, str):
        return key
    raise TypeError(f"{key!r} has type {type(key).__name__}, but expected one of: bytes, str")


class MessageMapContainer:
    """A ``map<string, Message>`` field (protobuf's class of that name): reading a missing
    key makes its entry, as protobuf does; entries keep their insertion order (protobuf's are
    in a hash order that changes from process to process)."""

    __slots__ = ("_items", "_cls", "_notify")

    def __init__(self, cls: type, notify: Callable[[], None]) -> None:
        self._items: dict = {}
        self._cls = cls
        self._notify = notify

    def __getitem__(self, key: Any):
        key = _map_key(key)
        item = self._items.get(key)
        if item is None:
            item = self._cls()
            object.__setattr__(item, "_parent", self._notify)
            self._items[key] = item
            self._notify()
        return item

    def get_or_create(self, key: Any):
        return self[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        raise ValueError("Message objects may not be assigned")

    def get(self, key: Any, default: Any = None):
        return self._items.get(_map_key(key), default)

    def __delitem__(self, key: Any) -> None:
        del self._items[_map_key(key)]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, (str, bytes)) and _map_key(key) in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def keys(self):
        return self._items.keys()

    def values(self):
        return self._items.values()

    def items(self):
        return self._items.items()

    def clear(self) -> None:
        self._items.clear()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageMapContainer):
            return self._items == other._items
        if isinstance(other, dict):
            return self._items == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._items)


def _compare_keys(a: bytes, b: bytes) -> int:
    common = min(len(a), len(b))
    if a[:common] != b[:common]:
        return -1 if a[:common] < b[:common] else 1
    return (len(a) < len(b)) - (len(a) > len(b))  # a prefix comes after the longer key


_KEY_ORDER = functools.cmp_to_key(_compare_keys)


def map_order(entries) -> list[str]:
    """A map's keys in the order protobuf's ``deterministic=True`` writes them (upb's sort):
    by their UTF-8 bytes, except that a key comes after the longer keys it is a prefix of
    (``"k10"``, ``"k1"``; ``""`` last)."""
    return sorted(entries, key=lambda k: _KEY_ORDER(k.encode("utf-8")))


_ESCAPES = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}


def text_bytes(value: bytes) -> str:
    """``value`` C-escaped as protobuf's text format writes a bytes field (octal for bytes
    outside printable ASCII)."""
    out = []
    for byte in value:
        if byte in _ESCAPES:
            out.append(_ESCAPES[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return "".join(out)


def text_string(value: str) -> str:
    """``value`` escaped as protobuf's text format writes a string field: as a bytes field,
    but characters outside ASCII kept as they are."""
    out = []
    for char in value:
        code = ord(char)
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\{code:03o}")
        else:
            out.append(char)
    return "".join(out)
