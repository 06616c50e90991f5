"""protobuf's text format (as ``str()`` of a message prints it; upb's, which TF 2.21 uses).

Fields in number order, one ``name: value`` line per repeated value, sub-messages as
``name {`` ... ``}`` indented by two spaces, a map entry as ``name { key: "..." value { ... } }``
(entries in :func:`simdist.data.repeated.map_order`), bytes C-escaped with octal for bytes
outside printable ASCII, strings the same with their non-ASCII characters kept, floats as
``%.6g`` when that reads back as the same float32, else ``%.9g``.
"""

from __future__ import annotations

import numpy as np

from simdist.data.repeated import map_order, text_bytes, text_string

__all__ = ["message_text"]


def message_text(message) -> str:
    """The text format of ``message`` (empty for a message with nothing set)."""
    return "".join(_lines(message, 0))


def _lines(message, depth: int) -> list[str]:
    pad = "  " * depth
    lines = []
    for field, value in message.ListFields():
        if field.kind == "bytes":
            lines += [f'{pad}{field.name}: "{text_bytes(v)}"\n' for v in value]
        elif field.kind == "float":
            lines += [f"{pad}{field.name}: {_text_float(v)}\n" for v in value]
        elif field.kind == "int64":
            lines += [f"{pad}{field.name}: {v}\n" for v in value]
        elif field.kind == "message":
            lines += [f"{pad}{field.name} {{\n", *_lines(value, depth + 1), f"{pad}}}\n"]
        elif field.kind == "messages":
            for item in value:
                lines += [f"{pad}{field.name} {{\n", *_lines(item, depth + 1), f"{pad}}}\n"]
        else:
            inner = "  " * (depth + 1)
            for key_ in map_order(value):
                lines += [
                    f"{pad}{field.name} {{\n",
                    f'{inner}key: "{text_string(key_)}"\n',
                    f"{inner}value {{\n",
                    *_lines(value[key_], depth + 2),
                    f"{inner}}}\n",
                    f"{pad}}}\n",
                ]
    return lines


def _text_float(value: float) -> str:
    """protobuf's text format of a float field (upb's): ``%.6g`` when it reads back as the
    same float32, else ``%.9g``."""
    if value != value:
        return "nan"
    short = f"{value:.6g}"
    if np.float32(float(short)) == np.float32(value):
        return short
    return f"{value:.9g}"
