"""A small protocol-buffer message class, enough for ``tf.train.Example`` and its parts.

A message class declares its fields as :class:`Field` s (name, number, kind); this module
gives it what protobuf's Python messages give: keyword construction (sub-messages also as
dicts), attribute access (a sub-message is made on first read and counts as set once
something in it is), repeated fields as checked lists that cannot be reassigned, string-keyed
maps of messages, ``oneof`` groups, ``SerializeToString`` / ``FromString`` /
``ParseFromString``, ``==``, ``HasField``, ``WhichOneof``, ``CopyFrom``, ``MergeFrom``,
``Clear``, ``ByteSize``, ``ListFields``, and ``str()`` in protobuf's text format, with the
messages of protobuf's errors (upb's, the implementation TF 2.21 installs).

Kinds: ``"bytes"``, ``"float"``, ``"int64"`` (repeated scalars; numbers packed on the wire),
``"message"`` (singular), ``"messages"`` (repeated) and ``"map"`` (``map<string, message>``).
Serialization follows protobuf's: fields in number order, a set sub-message written even when
empty, each map entry with its key and its value, unknown fields (kept from a parse) last.
Map entries are written, and printed, in the order of protobuf's ``deterministic=True``
(:func:`simdist.data.repeated.map_order`): protobuf's default order is its hash table's,
which changes from process to process; iterating a map gives its insertion order. The text
format is :mod:`simdist.data.protobuf_text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

from simdist import errors
from simdist.data import protobuf_text
from simdist.data import protobuf_wire as wire
from simdist.data.repeated import (
    MessageMapContainer,
    RepeatedCompositeContainer,
    RepeatedScalarContainer,
    map_order,
)

__all__ = ["DecodeError", "Field", "Message"]


class Field(NamedTuple):
    """One field of a message class."""

    name: str
    number: int
    kind: str  # "bytes" | "float" | "int64" | "message" | "messages" | "map"
    message: Any = None  # the message class of "message", "messages" and "map" fields
    oneof: str | None = None


_SCALAR_KINDS = ("bytes", "float", "int64")


class Message:
    """The base of the ``tf.train`` message classes; subclasses set ``FIELDS``."""

    FIELDS: ClassVar[tuple[Field, ...]] = ()
    __slots__ = ("_values", "_present", "_parent", "_unknown")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            raise TypeError("No positional arguments allowed")
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_present", set())
        object.__setattr__(self, "_parent", None)
        object.__setattr__(self, "_unknown", [])
        by_name = {f.name: f for f in self.FIELDS}
        for name, value in kwargs.items():
            field = by_name.get(name)
            if field is None:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            if value is None:
                continue
            if field.kind in _SCALAR_KINDS or field.kind == "messages":
                getattr(self, name).extend(value)
            elif field.kind == "map":
                target = getattr(self, name)
                for key_, item in dict(value).items():
                    target[key_].CopyFrom(_as_message(field.message, item))
            else:
                getattr(self, name).CopyFrom(_as_message(field.message, value))
                self._mark(field)

    # --- fields ---------------------------------------------------------------------------
    @classmethod
    def _field(cls, name: str) -> Field:
        for field in cls.FIELDS:
            if field.name == name:
                return field
        raise ValueError(f'Protocol message {cls.__name__} has no "{name}" field.')

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            field = type(self)._field(name)
        except ValueError:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}'"
            ) from None
        values = self._values
        if name not in values:
            notify = lambda: self._mark(field)  # noqa: E731 - a child's "I changed"
            if field.kind in _SCALAR_KINDS:
                values[name] = RepeatedScalarContainer(field.kind, notify)
            elif field.kind == "messages":
                values[name] = RepeatedCompositeContainer(field.message, notify)
            elif field.kind == "map":
                values[name] = MessageMapContainer(field.message, notify)
            else:
                child = field.message()
                object.__setattr__(child, "_parent", notify)
                values[name] = child
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        try:
            field = type(self)._field(name)
        except ValueError:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}'"
            ) from None
        if field.kind == "message":
            raise AttributeError(
                f'Assignment not allowed to message field "{name}" in protocol message object.'
            )
        raise AttributeError(
            f'Assignment not allowed to map, or repeated field "{name}" in protocol message '
            "object."
        )

    def _mark(self, field: Field) -> None:
        """``field`` holds something now: it and this message (in its parent) are set."""
        if field.oneof is not None:
            for other in self.FIELDS:
                if other.oneof == field.oneof and other.name != field.name:
                    self._present.discard(other.name)
                    self._values.pop(other.name, None)
        if field.kind == "message":
            self._present.add(field.name)
        if self._parent is not None:
            self._parent()

    def HasField(self, name: str) -> bool:
        if any(f.oneof == name for f in self.FIELDS):
            return self.WhichOneof(name) is not None
        field = type(self)._field(name)
        if field.kind != "message":
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        return name in self._present

    def WhichOneof(self, group: str) -> str | None:
        names = [f.name for f in self.FIELDS if f.oneof == group]
        if not names:
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        return next((n for n in names if n in self._present), None)

    def ClearField(self, name: str) -> None:
        type(self)._field(name)
        self._values.pop(name, None)
        self._present.discard(name)

    def Clear(self) -> None:
        self._values.clear()
        self._present.clear()
        self._unknown.clear()

    def _is_set(self, field: Field) -> bool:
        if field.kind == "message":
            return field.name in self._present
        value = self._values.get(field.name)
        return value is not None and len(value) > 0

    def ListFields(self) -> list[tuple[Field, Any]]:
        """The set fields, in number order, as ``(field, value)`` (a Field has ``.name``)."""
        fields = sorted(self.FIELDS, key=lambda f: f.number)
        return [(f, getattr(self, f.name)) for f in fields if self._is_set(f)]

    def CopyFrom(self, other: Message) -> None:
        if type(other) is not type(self):
            raise TypeError(
                f"Parameter to CopyFrom() must be instance of same class: expected "
                f"{type(self).__name__} got {type(other).__name__}."
            )
        if other is self:
            return
        self.Clear()
        self.MergeFrom(other)

    def MergeFrom(self, other: Message) -> None:
        if type(other) is not type(self):
            raise TypeError(
                f"Parameter to MergeFrom() must be instance of same class: expected "
                f"{type(self).__name__} got {type(other).__name__}."
            )
        for field, value in other.ListFields():
            mine = getattr(self, field.name)
            if field.kind == "map":
                for key_, item in value.items():
                    mine[key_].MergeFrom(item)
            elif field.kind == "message":
                mine.MergeFrom(value)
                self._mark(field)
            else:
                mine.extend(value)
        self._unknown.extend(other._unknown)
        if other._present and self._parent is not None:
            self._parent()

    # --- the wire -------------------------------------------------------------------------
    def SerializeToString(self, deterministic: bool = False) -> bytes:
        """The message in protobuf's binary format: as protobuf writes it, with map entries
        sorted by key (protobuf's ``deterministic=True``; its default order is a hash order
        that changes from process to process), then the unknown fields read by a parse."""
        out = []
        for field, value in self.ListFields():
            if field.kind == "bytes":
                out += [wire.length_field(field.number, bytes(v)) for v in value]
            elif field.kind == "float":
                out.append(wire.length_field(field.number, wire.packed_floats(list(value))))
            elif field.kind == "int64":
                out.append(wire.length_field(field.number, wire.packed_varints(value)))
            elif field.kind == "message":
                out.append(wire.length_field(field.number, value.SerializeToString()))
            elif field.kind == "messages":
                out += [wire.length_field(field.number, m.SerializeToString()) for m in value]
            else:
                for key_ in map_order(value):
                    entry = wire.length_field(1, key_.encode("utf-8")) + wire.length_field(
                        2, value[key_].SerializeToString()
                    )
                    out.append(wire.length_field(field.number, entry))
        return b"".join(out) + b"".join(self._unknown)

    def ByteSize(self) -> int:
        return len(self.SerializeToString())

    def ParseFromString(self, data: bytes) -> int:
        """Replace the contents with the parsed ``data``; returns its length.

        Raises:
            DecodeError: ``data`` is not a serialized message of this type.
        """
        self.Clear()
        self.MergeFromString(data)
        return len(data)

    def MergeFromString(self, data: bytes) -> int:
        try:
            self._merge(memoryview(bytes(data)) if not isinstance(data, memoryview) else data)
        except errors.DataLossError:
            raise DecodeError(
                f"Error parsing message with type 'tensorflow.{type(self).__name__}': Wire "
                "format was corrupt"
            ) from None
        return len(data)

    @classmethod
    def FromString(cls, data: bytes) -> Message:
        message = cls()
        message.MergeFromString(data)
        return message

    def _merge(self, data: memoryview) -> None:
        by_number = {f.number: f for f in self.FIELDS}
        for number, wire_type, value in wire.read_fields(data):
            field = by_number.get(number)
            if field is None:
                self._unknown.append(_field_bytes(number, wire_type, value))
                continue
            if field.kind == "int64":
                if wire_type == wire.LENGTH:
                    getattr(self, field.name).extend(wire.unpack_varints(value))
                elif wire_type == wire.VARINT:
                    getattr(self, field.name).append(wire.as_int64(value))
                else:
                    raise _wrong_wire(self, field, wire_type)
            elif field.kind == "float":
                if wire_type == wire.LENGTH:
                    getattr(self, field.name).extend(wire.unpack_floats(value))
                elif wire_type == wire.FIXED32:
                    getattr(self, field.name).extend(wire.unpack_floats(value))
                else:
                    raise _wrong_wire(self, field, wire_type)
            elif wire_type != wire.LENGTH:
                raise _wrong_wire(self, field, wire_type)
            elif field.kind == "bytes":
                getattr(self, field.name).append(bytes(value))
            elif field.kind == "message":
                getattr(self, field.name)._merge(value)
                self._mark(field)
            elif field.kind == "messages":
                getattr(self, field.name).add()._merge(value)
            else:
                key_, item = _map_entry(field, value)
                getattr(self, field.name)[key_]._merge(item)

    # --- comparing and printing -------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        if type(other) is not type(self):
            return False
        mine, theirs = self.ListFields(), other.ListFields()
        if [f.name for f, _ in mine] != [f.name for f, _ in theirs]:
            return False
        for (field, a), (_, b) in zip(mine, theirs, strict=True):
            if field.kind == "map":
                if dict(a.items()) != dict(b.items()):
                    return False
            elif a != b:
                return False
        return True

    __hash__ = None  # type: ignore[assignment] - mutable, as protobuf's

    def __reduce__(self):
        return type(self).FromString, (self.SerializeToString(),)

    def __copy__(self) -> Message:
        return type(self).FromString(self.SerializeToString())

    def __deepcopy__(self, memo: dict) -> Message:
        return self.__copy__()

    def __str__(self) -> str:
        return protobuf_text.message_text(self)

    __repr__ = __str__

class DecodeError(Exception):
    """A message could not be parsed (protobuf's ``google.protobuf.message.DecodeError``)."""


def _as_message(cls: type, value: Any) -> Message:
    if isinstance(value, Mapping):
        return cls(**value)
    if not isinstance(value, cls):
        raise TypeError(
            f"Parameter to initialize message field must be dict or instance of same class: "
            f"expected {cls.__name__} got {type(value).__name__}."
        )
    return value


def _wrong_wire(message: Message, field: Field, wire_type: int) -> errors.DataLossError:
    return errors.DataLossError(
        f"field {field.name} of {type(message).__name__} has wire type {wire_type}"
    )


def _map_entry(field: Field, data: memoryview) -> tuple[str, memoryview]:
    key_, item = "", memoryview(b"")
    for number, wire_type, value in wire.read_fields(data):
        if wire_type != wire.LENGTH:
            raise _wrong_wire_entry(field)
        if number == 1:
            key_ = bytes(value).decode("utf-8")
        elif number == 2:
            item = value
    return key_, item


def _wrong_wire_entry(field: Field) -> errors.DataLossError:
    return errors.DataLossError(f"a map entry of {field.name} is malformed")


def _field_bytes(number: int, wire_type: int, value: Any) -> bytes:
    """One field as it was on the wire (for keeping unknown fields)."""
    if wire_type == wire.VARINT:
        return wire.key(number, wire_type) + wire.varint(value)
    if wire_type == wire.LENGTH:
        return wire.length_field(number, bytes(value))
    return wire.key(number, wire_type) + bytes(value)
