"""Reading serialized ``Example`` and ``SequenceExample`` messages straight from the wire.

For parsing (:mod:`simdist.data.parsing`), a message is read into plain Python: a
``Features`` map becomes ``{name: (kind, values)}`` with ``kind`` one of ``"string"``,
``"float"``, ``"int64"`` (``None`` for a ``Feature`` with no list set) and ``values`` a list;
a ``FeatureLists`` map ``{name: [(kind, values), ...]}``, one pair per step. Field numbers are
those of :mod:`simdist.data.example`; repeated numbers may be packed or not; a later
``Feature`` list of another kind replaces the earlier (a ``oneof``), of the same kind extends
it; a later map entry with the same key replaces the earlier one.
"""

from __future__ import annotations

from simdist import errors
from simdist.data import protobuf_wire as wire

__all__ = ["read_example", "read_sequence_example"]

_LIST_KINDS = {1: "string", 2: "float", 3: "int64"}  # Feature's oneof field numbers


def _list_values(kind: str, data: memoryview) -> list:
    values: list = []
    for number, wire_type, value in wire.read_fields(data):
        if number != 1:
            continue
        if kind == "string" and wire_type == wire.LENGTH:
            values.append(bytes(value))
        elif kind == "float" and wire_type in (wire.LENGTH, wire.FIXED32):
            values.extend(wire.unpack_floats(value))
        elif kind == "int64" and wire_type == wire.LENGTH:
            values.extend(wire.unpack_varints(value))
        elif kind == "int64" and wire_type == wire.VARINT:
            values.append(wire.as_int64(value))
        else:
            raise errors.DataLossError(f"a {kind} list has a field of wire type {wire_type}")
    return values


def _feature(data: memoryview) -> tuple[str | None, list]:
    kind, values = None, []
    for number, wire_type, value in wire.read_fields(data):
        if number in _LIST_KINDS and wire_type == wire.LENGTH:
            new_kind = _LIST_KINDS[number]
            more = _list_values(new_kind, value)
            values = values + more if new_kind == kind else more  # a oneof: the last wins
            kind = new_kind
    return kind, values


def _map(data: memoryview, read_value) -> dict:
    """A ``map<string, ...>`` field's entries (messages holding key = 1, value = 2)."""
    out: dict = {}
    for number, wire_type, entry in wire.read_fields(data):
        if number != 1 or wire_type != wire.LENGTH:
            continue
        key, value = "", memoryview(b"")
        for field, field_type, item in wire.read_fields(entry):
            if field == 1 and field_type == wire.LENGTH:
                key = bytes(item).decode("utf-8", "replace")
            elif field == 2 and field_type == wire.LENGTH:
                value = item
        out[key] = read_value(value)
    return out


def _features(data: memoryview) -> dict:
    return _map(data, _feature)


def _feature_list(data: memoryview) -> list:
    return [_feature(v) for n, t, v in wire.read_fields(data) if n == 1 and t == wire.LENGTH]


def read_example(serialized: bytes) -> dict:
    """The features of a serialized ``Example``.

    Raises:
        DataLossError: ``serialized`` is not a well-formed message.
    """
    features: dict = {}
    for number, wire_type, value in wire.read_fields(serialized):
        if number == 1 and wire_type == wire.LENGTH:
            features.update(_features(value))
    return features


def read_sequence_example(serialized: bytes) -> tuple[dict, dict]:
    """The context features and the feature lists of a serialized ``SequenceExample``.

    Raises:
        DataLossError: ``serialized`` is not a well-formed message.
    """
    context: dict = {}
    lists: dict = {}
    for number, wire_type, value in wire.read_fields(serialized):
        if number == 1 and wire_type == wire.LENGTH:
            context.update(_features(value))
        elif number == 2 and wire_type == wire.LENGTH:
            lists.update(_map(value, _feature_list))
    return context, lists
