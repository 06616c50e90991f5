"""The on-disk checkpoint format: a checksummed JSON index and an ``.npz`` of values.

A checkpoint with prefix ``P`` (``/dir/ckpt-3``) is two files:

``P.data-<h>.npz``
    A NumPy zip archive as ``np.savez`` writes it (uncompressed), one member per saved
    value, named ``v0``, ``v1``...; ``<h>`` is the first 16 hex digits of its SHA-256. Only
    plain numeric/bool arrays: it is read back with ``allow_pickle=False``, so a checkpoint
    never runs code when loaded.
``P.index``
    The checkpoint's manifest and commit record: a self-checksummed JSON document
    (``integrity.py``)::

        {"format": "simdist-checkpoint", "format_version": 2, "simdist_version": "0.1.0",
         "files": [{"name": "ckpt-3.data-1f0c...npz", "bytes": 1234, "sha256": "<hex>"}],
         "values": {"<key>": {"array": "v0", "dtype": "float32", "shape": [3, 3, 1, 32]}},
         "object_graph": [{"children": {"model": 1, ...}},
                          {"tensors": {"VARIABLE_VALUE": "<key>"}},
                          {"children": {...}, "slots": [{"variable": 5, "name": "m",
                                                          "node": 9}]}],
         "sha256": "<hex of this file's bytes before the digest>"}

    ``files`` lists every data file with its size and SHA-256; ``values`` maps each key (a
    path in the object graph, see ``graph.py``) to its array; ``object_graph`` lists the
    nodes (node 0 is the root): an object node names its children by node id; a node with
    saved state names the key of each of its tensors; an optimizer node lists its slot
    variables by the node of the variable they belong to.

Reading verifies everything before any value is used: the index's own SHA-256, its schema
(every field, every node, every value entry), every file's size and SHA-256, and that the
archive holds exactly the arrays the index describes. Any difference is ``DataLossError``
naming the file; a missing file is ``NotFoundError``.

Atomicity: the data file is written first under its content-derived name, then the index
replaces the old one with one ``os.replace`` (``integrity.atomic_write_bytes``). The rename
is the commit: before it the old index still names the old data file, which is still
there; after it the new one. So a save killed at any moment leaves either the old or the
new checkpoint at ``P``, never a mixture, and never none when there was one. After the
commit, data files of ``P`` that the index does not name and temporary files of ``P``
(leftovers of killed saves) are removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import threading
import zipfile
from collections.abc import Iterator

import numpy as np

from simdist import errors
from simdist.checkpoint import integrity
from simdist.checkpoint.integrity import atomic_write_bytes

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "write_files",
    "read_index",
    "read_values",
    "checkpoint_exists",
    "exclusive_prefix",
    "atomic_write_bytes",
    "data_files",
    "remove_checkpoint",
]

FORMAT_NAME = "simdist-checkpoint"
FORMAT_VERSION = 2
INDEX_SUFFIX = ".index"
DATA_SUFFIX = ".npz"

_ADVICE = "restore an earlier checkpoint (or write this one again)"
_locks_guard = threading.Lock()
_busy_prefixes: dict[str, str] = {}  # absolute prefix -> description of the writer


@contextlib.contextmanager
def exclusive_prefix(prefix: str, writer: str) -> Iterator[None]:
    """Hold ``prefix`` for one writer of this process; a second concurrent writer fails.

    Raises:
        FailedPreconditionError: another save to ``prefix`` is in progress in this process.
    """
    key = os.path.abspath(prefix)
    with _locks_guard:
        holder = _busy_prefixes.get(key)
        if holder is not None:
            raise errors.FailedPreconditionError(
                f"Concurrent writes to checkpoint prefix '{prefix}': {writer} tried to save "
                f"while {holder} is saving there. Two writers to one path would mix their "
                "files; give each writer its own prefix (e.g. one directory per worker) or "
                "save one after the other."
            )
        _busy_prefixes[key] = writer
    try:
        yield
    finally:
        with _locks_guard:
            del _busy_prefixes[key]


def _data_pattern(base: str) -> re.Pattern:
    return re.compile(re.escape(base) + r"\.data-[0-9a-f]{16}\.npz")


def data_files(prefix: str) -> list[str]:
    """The data files of prefix ``prefix`` on disk (current and stale), sorted."""
    directory, base = os.path.split(prefix)
    pattern = _data_pattern(base)
    try:
        names = os.listdir(directory or ".")
    except FileNotFoundError:
        return []
    return sorted(os.path.join(directory, n) for n in names if pattern.fullmatch(n))


def remove_checkpoint(prefix: str) -> None:
    """Delete the checkpoint at ``prefix``: its index first (so it stops existing), then
    its data files and leftovers."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(prefix + INDEX_SUFFIX)
    _remove_stale(prefix, keep=set())


def _remove_stale(prefix: str, keep: set[str]) -> None:
    directory, base = os.path.split(prefix)
    data = _data_pattern(base)
    patterns = [data, integrity.temp_pattern(base + INDEX_SUFFIX)]
    patterns.append(re.compile(r"\." + data.pattern + r"\.[A-Za-z0-9_]+\.tmp"))
    integrity.remove_stale(directory, patterns, keep)


def write_files(prefix: str, values: dict[str, np.ndarray], object_graph: list[dict]) -> None:
    """Write the checkpoint ``prefix`` (data file, then the index as the commit record).

    Args:
        prefix: the checkpoint prefix; its directory is created when missing.
        values: key -> array (numeric or bool dtypes).
        object_graph: the node list described in this module's docstring.

    Raises:
        TypeError: a value whose dtype cannot be stored without pickle.
    """
    from simdist.version import __version__

    arrays: dict[str, np.ndarray] = {}
    entries: dict[str, dict] = {}
    for n, (key, value) in enumerate(values.items()):
        array = np.array(value, order="C", copy=True)
        if array.dtype.hasobject or array.dtype.kind not in "biufc":
            raise TypeError(
                f"Cannot checkpoint '{key}' of dtype {array.dtype}: only numeric and bool "
                "arrays are stored (the format never pickles)."
            )
        name = f"v{n}"
        arrays[name] = array
        entries[key] = {"array": name, "dtype": array.dtype.name, "shape": list(array.shape)}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    data = buffer.getvalue()
    directory, base = os.path.split(prefix)
    data_name = f"{base}.data-{hashlib.sha256(data).hexdigest()[:16]}{DATA_SUFFIX}"
    index = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "simdist_version": __version__,
        "files": [integrity.file_entry(data_name, data)],
        "values": entries,
        "object_graph": object_graph,
    }
    if directory:
        os.makedirs(directory, exist_ok=True)
    atomic_write_bytes(os.path.join(directory, data_name), data)
    atomic_write_bytes(prefix + INDEX_SUFFIX, integrity.checked_document(_index_text(index)))
    _remove_stale(prefix, keep={data_name})


def _index_text(index: dict) -> str:
    """The index as JSON with one value entry and one graph node per line (diff-friendly)."""
    lines = []
    for name, field in index.items():
        if name == "values":
            rows = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in field.items()]
            lines.append(' "values": {\n' + ",\n".join(rows) + "\n }")
        elif name == "object_graph":
            rows = [f"  {json.dumps(node)}" for node in field]
            lines.append(' "object_graph": [\n' + ",\n".join(rows) + "\n ]")
        else:
            lines.append(f" {json.dumps(name)}: {json.dumps(field)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def checkpoint_exists(prefix: str) -> bool:
    """Whether a complete checkpoint (its index) exists at ``prefix``."""
    return os.path.isfile(prefix + INDEX_SUFFIX)


def _not_found(prefix: str) -> errors.NotFoundError:
    hint = ""
    if os.path.isdir(prefix):
        hint = (
            " This is a directory: pass a checkpoint prefix, e.g. "
            "tf.train.latest_checkpoint(directory)."
        )
    elif data_files(prefix):
        hint = (
            f" '{data_files(prefix)[-1]}' exists without its index: the save was interrupted; "
            "restore an earlier checkpoint."
        )
    return errors.NotFoundError(
        f"Failed to restore from checkpoint '{prefix}': no checkpoint index "
        f"'{prefix}{INDEX_SUFFIX}'.{hint} Check the path (it is the prefix returned by "
        "save() or write(), without a file suffix)."
    )


def _data_loss(prefix: str, what: str) -> errors.DataLossError:
    return errors.DataLossError(
        f"Checkpoint '{prefix}' is corrupted: {what}. The file was truncated or altered after "
        "it was written; restore an earlier checkpoint (or write this one again)."
    )


def _peek_version(raw: bytes):
    """The format version of an index, read leniently (a newer version may check otherwise)."""
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return document.get("format_version") if isinstance(document, dict) else None


def read_index(prefix: str) -> dict:
    """The verified, parsed index of the checkpoint at ``prefix``.

    Raises:
        NotFoundError: no index at ``prefix``.
        DataLossError: the index is damaged (its SHA-256) or breaks the schema.
        UnimplementedError: written in another format version (newer, or the unchecksummed 1).
    """
    path = prefix + INDEX_SUFFIX
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise _not_found(prefix) from None
    version = _peek_version(raw)
    if isinstance(version, int) and not isinstance(version, bool) and version != FORMAT_VERSION:
        raise errors.UnimplementedError(
            f"Checkpoint '{prefix}' has format version {version}; this simdist reads version "
            f"{FORMAT_VERSION} (checksummed). "
            + (
                "Upgrade simdist to read it."
                if version > FORMAT_VERSION
                else "Older versions had no integrity manifest and are not read; save the "
                "training state again with this simdist."
            )
        )
    index = integrity.read_checked_document(raw, path, _ADVICE)
    if index.get("format") != FORMAT_NAME or index.get("format_version") != FORMAT_VERSION:
        raise _data_loss(prefix, f"index '{path}' is not a {FORMAT_NAME} index")
    problem = _schema_problem(index)
    if problem:
        raise _data_loss(prefix, f"index '{path}': {problem}")
    return index


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _schema_problem(index: dict) -> str | None:
    """What is wrong with the index's fields, files, values and object graph, or None."""
    expected = {"format", "format_version", "simdist_version", "files", "values", "object_graph"}
    if set(index) != expected:
        return f"its fields are {sorted(index)}, expected {sorted(expected)}"
    files, nodes, values = index["files"], index["object_graph"], index["values"]
    if not isinstance(files, list) or len(files) != 1:
        return "the file list is malformed"
    entry = files[0]
    if (
        not isinstance(entry, dict)
        or set(entry) != {"name", "bytes", "sha256"}
        or not isinstance(entry["name"], str)
        or os.path.basename(entry["name"]) != entry["name"]
        or not _is_count(entry["bytes"])
        or not isinstance(entry["sha256"], str)
    ):
        return "the data file entry is malformed"
    if not isinstance(nodes, list) or not nodes or not isinstance(values, dict):
        return "the object graph or value table is malformed"
    arrays = set()
    for key, item in values.items():
        if (
            not isinstance(item, dict)
            or set(item) != {"array", "dtype", "shape"}
            or not isinstance(item["array"], str)
            or not isinstance(item["dtype"], str)
            or not isinstance(item["shape"], list)
            or not all(_is_count(d) for d in item["shape"])
        ):
            return f"value {key!r} has a malformed entry"
        if item["array"] in arrays:
            return f"value {key!r} names array {item['array']!r} a second time"
        arrays.add(item["array"])
    return _graph_problem(nodes, values)


def _graph_problem(nodes: list, values: dict) -> str | None:
    ids = range(len(nodes))
    owner: dict[str, int] = {}
    for n, node in enumerate(nodes):
        if not isinstance(node, dict) or not set(node) <= {"children", "tensors", "slots"}:
            return f"object-graph node {n} is malformed"
        children = node.get("children", {})
        if not isinstance(children, dict) or any(
            not _is_count(c) or c not in ids for c in children.values()
        ):
            return f"object-graph node {n} has bad children"
        tensors = node.get("tensors", {})
        if not isinstance(tensors, dict):
            return f"object-graph node {n} has bad tensors"
        for key in tensors.values():
            if key not in values:
                return f"object-graph node {n} names value {key!r}, which is not saved"
            if key in owner:
                return f"value {key!r} belongs to nodes {owner[key]} and {n}"
            owner[key] = n
        slots = node.get("slots", [])
        if not isinstance(slots, list):
            return f"object-graph node {n} has bad slots"
        for slot in slots:
            if (
                not isinstance(slot, dict)
                or set(slot) != {"variable", "name", "node"}
                or not isinstance(slot["name"], str)
                or not _is_count(slot["variable"])
                or not _is_count(slot["node"])
                or slot["variable"] not in ids
                or slot["node"] not in ids
            ):
                return f"object-graph node {n} has a bad slot entry"
    return None


def read_values(prefix: str, index: dict) -> dict[str, np.ndarray]:
    """The saved arrays by key, checked against the verified ``index``.

    Raises:
        NotFoundError: the data file is missing.
        DataLossError: it does not match the index or is not a readable archive.
    """
    entry = index["files"][0]
    path = os.path.join(os.path.dirname(prefix), entry["name"])
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(
            f"Checkpoint '{prefix}' is incomplete: its data file '{path}' is missing. "
            "Copy both the .index and the data file of a checkpoint."
        ) from None
    integrity.verify_bytes(entry, data, path, _ADVICE)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise _data_loss(prefix, f"data file '{path}' is not a readable archive ({exc})") from None
    wanted = {item["array"] for item in index["values"].values()}
    if set(arrays) != wanted:
        raise _data_loss(prefix, f"data file '{path}' holds other arrays than its index lists")
    out = {}
    for key, item in index["values"].items():
        array = arrays[item["array"]]
        if array.dtype.name != item["dtype"] or list(array.shape) != item["shape"]:
            raise _data_loss(
                prefix,
                f"value '{key}' is {array.dtype.name}{list(array.shape)} in '{path}' but "
                f"{item['dtype']}{item['shape']} in the index",
            )
        out[key] = array
    return out
