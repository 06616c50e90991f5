"""Verified containers of named files: one file (a *bundle*) or a directory, with one manifest.

A saved model or a weights file is a few named members (``config.json``, ``weights.npz``,
a checkpoint's ``.index`` and data file). They are stored in one of two forms, both
described by one manifest (``integrity.py``: each member's name, size and SHA-256, and
the manifest's own SHA-256):

a bundle (one file: ``model.keras``, ``model.weights.h5``)::

    simdist-bundle 1 <manifest length in bytes>\\n
    <the manifest: a self-checksummed JSON document>
    <the members' bytes, one after the other, in the manifest's order>

    It is **not** an HDF5 file nor a zip archive, whatever its suffix says: h5py and Keras
    cannot open it, and simdist cannot open theirs. The file's length must be exactly the
    header's, the manifest's and the members' sizes added up.

a directory (a SavedModel-style path without suffix): each member is a file of that name,
    and ``manifest.json`` is the manifest.

Manifest::

    {"format": "simdist-container", "format_version": 1, "kind": "keras-model",
     "members": [{"name": "config.json", "bytes": 812, "sha256": "<hex>"}, ...],
     "sha256": "<hex>"}

Reading verifies the manifest and every member before returning any of them, so a single
changed, missing or extra byte anywhere is ``DataLossError`` naming the file (and member).

Atomic replacement: a bundle is written to a temporary file and renamed over the old one
(one rename). A directory is written complete beside the old one (``.NAME.saving-*``) and
exchanged with it in one ``renameat2(RENAME_EXCHANGE)`` where the system has it (Linux);
elsewhere two renames, with the old copy kept at ``.NAME.old-*`` until the new one is in
place (a crash between them is named by :func:`read_members`). Leftovers of killed saves
(``.NAME.*.tmp``, ``.NAME.saving-*``, ``.NAME.old-*``) are removed by the next save.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import re
import shutil
import tempfile
import threading

from simdist import errors
from simdist.checkpoint import integrity
from simdist.checkpoint.format import exclusive_prefix

__all__ = ["write_members", "read_members", "MANIFEST", "leftovers"]

FORMAT_NAME = "simdist-container"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_HEADER = re.compile(rb"simdist-bundle 1 ([1-9][0-9]{0,11})\n")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def _manifest(kind: str, members: dict[str, bytes]) -> bytes:
    entries = [integrity.file_entry(name, data) for name, data in members.items()]
    document = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "kind": kind,
        "members": entries,
    }
    return integrity.checked_document(json.dumps(document, indent=1))


def _leftover_patterns(base: str) -> list[re.Pattern]:
    name = re.escape(base)
    return [
        re.compile(r"\." + name + r"\.[A-Za-z0-9_]+\.tmp"),
        re.compile(r"\." + name + r"\.(saving|old)-[A-Za-z0-9_]+"),
    ]


def leftovers(path: str) -> list[str]:
    """Leftovers of killed saves to ``path`` that exist now (full paths, sorted)."""
    parent, base = os.path.split(os.path.abspath(path))
    patterns = _leftover_patterns(base)
    return sorted(
        os.path.join(parent, n) for n in os.listdir(parent) if any(p.fullmatch(n) for p in patterns)
    )


def write_members(path: str, kind: str, members: dict[str, bytes], directory: bool) -> None:
    """Write ``members`` at ``path`` as a bundle file or a directory, replacing atomically.

    Args:
        path: the file or directory to (re)place; its parent is created when missing.
        kind: what the container holds (``"keras-model"``, ``"keras-weights"``).
        members: name -> bytes, in the order to list them.
        directory: a directory (True) or one bundle file (False).

    Raises:
        FailedPreconditionError: another save to ``path`` is running in this process.
    """
    for name in members:
        if not _NAME.fullmatch(name) or name == MANIFEST:
            raise ValueError(f"bad member name {name!r}")
    path = os.path.abspath(path)
    writer = f"a save of {kind} in thread {threading.current_thread().name!r}"
    with exclusive_prefix(path, writer):  # a second writer would remove the first's staging
        _write_members(path, kind, members, directory)


def _write_members(path: str, kind: str, members: dict[str, bytes], directory: bool) -> None:
    parent, base = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    integrity.remove_stale(parent, _leftover_patterns(base), set())
    manifest = _manifest(kind, members)
    if not directory:
        header = b"simdist-bundle 1 %d\n" % len(manifest)
        integrity.atomic_write_bytes(path, header + manifest + b"".join(members.values()))
        return
    staging = tempfile.mkdtemp(dir=parent, prefix=f".{base}.saving-")
    try:
        for name, data in members.items():
            with open(os.path.join(staging, name), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        with open(os.path.join(staging, MANIFEST), "wb") as f:
            f.write(manifest)
            f.flush()
            os.fsync(f.fileno())
        integrity.fsync_directory(staging)
        _swap_in(staging, path, parent, base)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # holds the old copy after an exchange
    integrity.fsync_directory(parent)


def _exchange(a: str, b: str) -> bool:
    """Atomically exchange two paths (Linux ``renameat2(RENAME_EXCHANGE)``); False if the
    system cannot."""
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return False
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return result == 0


def _swap_in(staging: str, path: str, parent: str, base: str) -> None:
    """Put the complete directory ``staging`` at ``path``; the old copy ends at ``staging``."""
    if not os.path.lexists(path):
        os.rename(staging, path)
        os.mkdir(staging)  # (the caller removes it)
        return
    if _exchange(staging, path):
        return
    old = tempfile.mkdtemp(dir=parent, prefix=f".{base}.old-")
    os.rmdir(old)
    os.rename(path, old)
    try:
        os.rename(staging, path)
    except BaseException:
        os.rename(old, path)
        raise
    os.rename(old, staging)


# --- reading ------------------------------------------------------------------------------
def _parse_manifest(raw: bytes, where: str) -> tuple[str, list[dict]]:
    document = integrity.read_checked_document(raw, where)
    expected = {"format", "format_version", "kind", "members"}
    if set(document) != expected or document["format"] != FORMAT_NAME:
        raise errors.DataLossError(f"'{where}' is not a {FORMAT_NAME} manifest.")
    if document["format_version"] != FORMAT_VERSION:
        raise errors.UnimplementedError(
            f"'{where}' has container version {document['format_version']!r}; this simdist "
            f"reads version {FORMAT_VERSION}."
        )
    members = document["members"]
    names = set()
    if not isinstance(members, list) or not isinstance(document["kind"], str):
        raise errors.DataLossError(f"'{where}': the member list is malformed.")
    for entry in members:
        if (
            not isinstance(entry, dict)
            or set(entry) != {"name", "bytes", "sha256"}
            or not isinstance(entry["name"], str)
            or not _NAME.fullmatch(entry["name"])
            or entry["name"] in names
            or not isinstance(entry["bytes"], int)
            or isinstance(entry["bytes"], bool)
            or entry["bytes"] < 0
        ):
            raise errors.DataLossError(f"'{where}': a member entry is malformed: {entry!r:.120}")
        names.add(entry["name"])
    return document["kind"], members


def read_members(path: str) -> tuple[str, dict[str, bytes]]:
    """The kind and the verified members of the container at ``path`` (file or directory).

    Raises:
        FileNotFoundError: nothing at ``path`` (naming an interrupted save's old copy).
        DataLossError: any byte of the manifest or a member differs from what was written.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        manifest_path = os.path.join(path, MANIFEST)
        try:
            with open(manifest_path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"'{path}' is not a simdist saved model: '{manifest_path}' is missing (a "
                "saved model directory holds manifest.json, config.json and weights.npz; a "
                "weights checkpoint is loaded with model.load_weights)."
            ) from None
        kind, entries = _parse_manifest(raw, manifest_path)
        members = {}
        for entry in entries:
            member_path = os.path.join(path, entry["name"])
            try:
                with open(member_path, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                raise errors.DataLossError(
                    f"'{member_path}' is missing: the saved model is incomplete; save it "
                    "again or use a backup."
                ) from None
            integrity.verify_bytes(entry, data, member_path)
            members[entry["name"]] = data
        return kind, members
    if not os.path.isfile(path):
        old = [p for p in leftovers(path) if ".old-" in os.path.basename(p)]
        hint = ""
        if old:
            hint = (
                f" A save to it was interrupted; the previous copy is in '{old[-1]}': "
                f"rename it to '{path}' to recover it."
            )
        raise FileNotFoundError(f"No file or directory found at {path}.{hint}")
    with open(path, "rb") as f:
        raw = f.read()
    return _read_bundle(raw, path)


def _read_bundle(raw: bytes, path: str) -> tuple[str, dict[str, bytes]]:
    header = _HEADER.match(raw[:32])
    if header is None:
        raise errors.DataLossError(
            f"'{path}' is not a simdist bundle (it does not start with 'simdist-bundle 1'). "
            "simdist reads only files that simdist wrote: a .keras or .h5 file from Keras "
            "is a zip/HDF5 file, which simdist does not read."
        )
    start = header.end()
    end = start + int(header.group(1))
    kind, entries = _parse_manifest(raw[start:end], f"{path} (manifest)")
    total = end + sum(e["bytes"] for e in entries)
    if len(raw) != total:
        raise errors.DataLossError(
            f"'{path}' has {len(raw)} bytes, its manifest accounts for {total}: the file was "
            "truncated or extended; use an earlier copy (or save again)."
        )
    members = {}
    offset = end
    for entry in entries:
        data = raw[offset : offset + entry["bytes"]]
        integrity.verify_bytes(entry, data, f"{path} (member {entry['name']})")
        members[entry["name"]] = data
        offset += entry["bytes"]
    return kind, members
