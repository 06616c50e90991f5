"""Integrity of files on disk: self-checksummed JSON documents, file manifests, atomic writes.

Every checkpoint and saved model is described by one *manifest*: a JSON document that lists
each file (or member) it consists of with its size in bytes and its SHA-256, and that carries
a SHA-256 of its own bytes. Readers verify the whole manifest, then every file against it,
before anything is used; any difference raises ``DataLossError`` naming the file.

A self-checksummed document is UTF-8 JSON whose last field is ``"sha256"``: the hex digest
(lowercase) of every byte of the file before that digest::

    {
     "format": "simdist-checkpoint",
     ...,
     "sha256": "<64 hex digits: SHA-256 of the bytes from '{' through '"sha256": "'>"
    }

So ``json.load`` reads it like any JSON file, and a change of any single byte (whitespace
included), a truncation or an appended byte is detected.

Atomic writes: a file is written to a temporary file in the same directory (named
``.<name>.<random>.tmp``), flushed and fsynced, then renamed over the final name with
``os.replace`` (atomic on POSIX and Windows); the directory is fsynced after. A save that
is killed leaves at most such temporary files, which the next save of the same name removes
(:func:`remove_stale`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile

from simdist import errors

__all__ = [
    "checked_document",
    "read_checked_document",
    "file_entry",
    "verify_bytes",
    "atomic_write_bytes",
    "fsync_directory",
    "remove_stale",
    "temp_pattern",
]

_TRAILER = '"\n}\n'
_FIELD = ',\n "sha256": "'
_HEX = re.compile(r"[0-9a-f]{64}")
_ADVICE = "use an earlier copy (or save again)"


def checked_document(body: str) -> bytes:
    """The bytes of a self-checksummed document from ``body``, JSON text of an object.

    ``body`` must end with ``}`` (optionally followed by a newline) and must not have a
    ``sha256`` field of its own.
    """
    text = body.rstrip()
    parsed = json.loads(text)
    if not isinstance(parsed, dict) or not parsed or "sha256" in parsed:
        raise ValueError("a checked document is a non-empty JSON object without 'sha256'")
    content = (text[:-1].rstrip() + _FIELD).encode("utf-8")
    digest = hashlib.sha256(content).hexdigest()
    return content + digest.encode("ascii") + _TRAILER.encode("ascii")


def read_checked_document(raw: bytes, where: str, advice: str = _ADVICE) -> dict:
    """Verify and parse a self-checksummed document; ``sha256`` is removed from the result.

    Args:
        raw: the file's bytes.
        where: the file's path, for the error message.

    Raises:
        DataLossError: the file is truncated, altered, or not such a document.
    """
    trailer = _TRAILER.encode("ascii")
    field = _FIELD.encode("ascii")
    size = len(trailer) + 64
    digest = raw[-size : -len(trailer)] if len(raw) > size else b""
    content = raw[:-size] if len(raw) > size else b""
    if (
        not raw.endswith(trailer)
        or not content.endswith(field)
        or not _HEX.fullmatch(digest.decode("ascii", "replace"))
    ):
        raise errors.DataLossError(
            f"'{where}' is truncated or damaged: it does not end with its SHA-256 field. "
            f"The file was cut short or altered after it was written; {advice}."
        )
    if hashlib.sha256(content).hexdigest() != digest.decode("ascii"):
        raise errors.DataLossError(
            f"'{where}' does not match its own SHA-256: the file was altered after it was "
            f"written; {advice}."
        )
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:  # written so by someone else
        raise errors.DataLossError(f"'{where}' is not valid JSON ({exc}).") from None
    if not isinstance(document, dict):
        raise errors.DataLossError(f"'{where}' is not a JSON object.")
    document.pop("sha256", None)
    return document


def file_entry(name: str, data: bytes) -> dict:
    """A manifest entry: ``{"name", "bytes", "sha256"}``."""
    return {"name": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def verify_bytes(entry: dict, data: bytes, where: str, advice: str = _ADVICE) -> None:
    """Check ``data`` against its manifest ``entry``.

    Raises:
        DataLossError: size or SHA-256 differ (the message names ``where`` and ``advice``).
    """
    if len(data) != entry["bytes"]:
        raise errors.DataLossError(
            f"'{where}' has {len(data)} bytes, its manifest says {entry['bytes']}: the file "
            f"was truncated or altered; {advice}."
        )
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise errors.DataLossError(
            f"'{where}' does not match its SHA-256 in the manifest: the file was altered "
            f"after it was written; {advice}."
        )


def fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable (POSIX; a no-op elsewhere)."""
    if os.name != "posix":
        return
    fd = os.open(directory or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temp_pattern(name: str) -> re.Pattern:
    """The names :func:`atomic_write_bytes` gives its temporary files for ``name``."""
    return re.compile(r"\." + re.escape(name) + r"\.[A-Za-z0-9_]+\.tmp")


def atomic_write_bytes(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` all at once: temp file, fsync, ``os.replace``.

    On any failure the temporary file is removed and ``path`` is left as it was.
    """
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_directory(directory)


def remove_stale(directory: str, patterns: list[re.Pattern], keep: set[str]) -> list[str]:
    """Delete the entries of ``directory`` whose name fully matches one of ``patterns``,
    except those in ``keep`` (leftovers of saves that were killed). Returns their names."""
    removed = []
    try:
        names = sorted(os.listdir(directory or "."))
    except FileNotFoundError:
        return removed
    for name in names:
        if name in keep or not any(p.fullmatch(name) for p in patterns):
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(FileNotFoundError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        removed.append(name)
    return removed
