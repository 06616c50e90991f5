"""The on-disk checkpoint format: an ``.npz`` of values plus a JSON index, written atomically.

A checkpoint with prefix ``P`` (``/dir/ckpt-3``) is two files:

``P.npz``
    A NumPy zip archive as ``np.savez`` writes it (uncompressed), one member per saved
    value, named ``v0``, ``v1``... Only plain numeric/bool arrays: it is read back with
    ``allow_pickle=False``, so a checkpoint never runs code when loaded.
``P.index``
    UTF-8 JSON::

        {"format": "simdist-checkpoint", "format_version": 1, "simdist_version": "0.1.0",
         "data_file": "ckpt-3.npz", "data_bytes": 1234, "data_sha256": "<hex>",
         "values": {"<key>": {"array": "v0", "dtype": "float32", "shape": [3, 3, 1, 32]}},
         "object_graph": [{"children": {"model": 1, ...}}, {"children": {...}},
                          {"key": "<key>"},
                          {"children": {...}, "slots": [{"variable": 5, "name": "m",
                                                          "node": 9}]}]}

    ``values`` maps each key (a path in the object graph, see ``graph.py``) to its array;
    ``object_graph`` lists the nodes (node 0 is the root): an object node names its
    children by node id; a variable node has the ``key`` of its value; an optimizer node
    lists its slot variables by the node of the variable they belong to.

Atomicity: each file is written to a temporary file in the same directory, flushed and
fsynced, then renamed over the final name with ``os.replace`` (atomic on POSIX and Windows);
the directory is fsynced after. The index is written last and is the commit record: a
checkpoint exists when its index exists, and the index carries the size and SHA-256 of its
data file, so an interrupted or damaged save is detected, never read as numbers. Rewriting
an existing prefix removes its old index first, so a crash mid-rewrite leaves no checkpoint
at that prefix rather than a mismatched pair.

Errors: a missing index or data file raises ``NotFoundError``; a truncated, corrupted or
inconsistent file raises ``DataLossError``; both name the path and what to do.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
import threading
import zipfile
from collections.abc import Iterator

import numpy as np

from simdist import errors

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "write_files",
    "read_index",
    "read_values",
    "checkpoint_exists",
    "exclusive_prefix",
    "atomic_write_bytes",
]

FORMAT_NAME = "simdist-checkpoint"
FORMAT_VERSION = 1
INDEX_SUFFIX = ".index"
DATA_SUFFIX = ".npz"

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


def _fsync_directory(directory: str) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
    _fsync_directory(directory)


def write_files(prefix: str, values: dict[str, np.ndarray], object_graph: list[dict]) -> None:
    """Write the checkpoint ``prefix`` (``.npz`` then ``.index``) atomically.

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
    index = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "simdist_version": __version__,
        "data_file": os.path.basename(prefix) + DATA_SUFFIX,
        "data_bytes": len(data),
        "data_sha256": hashlib.sha256(data).hexdigest(),
        "values": entries,
        "object_graph": object_graph,
    }
    directory = os.path.dirname(prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(prefix + INDEX_SUFFIX)  # the old checkpoint at this prefix stops existing
    atomic_write_bytes(prefix + DATA_SUFFIX, data)
    atomic_write_bytes(prefix + INDEX_SUFFIX, _index_text(index).encode("utf-8"))


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
    elif os.path.isfile(prefix + DATA_SUFFIX):
        hint = (
            f" '{prefix}{DATA_SUFFIX}' exists without its index: the save was interrupted; "
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


def read_index(prefix: str) -> dict:
    """The parsed and checked JSON index of the checkpoint at ``prefix``.

    Raises:
        NotFoundError: no index at ``prefix``.
        DataLossError: the index is not valid JSON of this format.
        UnimplementedError: written by a newer format version.
    """
    path = prefix + INDEX_SUFFIX
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise _not_found(prefix) from None
    try:
        index = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _data_loss(prefix, f"index '{path}' is not valid JSON ({exc})") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT_NAME:
        raise _data_loss(prefix, f"index '{path}' is not a {FORMAT_NAME} index")
    version = index.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise errors.UnimplementedError(
            f"Checkpoint '{prefix}' has format version {version!r}; this simdist reads "
            f"version {FORMAT_VERSION} and older. Upgrade simdist to read it."
        )
    required = ("data_file", "data_bytes", "data_sha256", "values", "object_graph")
    missing = [k for k in required if k not in index]
    if missing:
        raise _data_loss(prefix, f"index '{path}' lacks the fields {missing}")
    problem = _graph_problem(index)
    if problem:
        raise _data_loss(prefix, f"index '{path}': {problem}")
    return index


def _graph_problem(index: dict) -> str | None:
    """What is wrong with the index's object graph and value table, or None."""
    nodes, values = index["object_graph"], index["values"]
    if not isinstance(nodes, list) or not nodes or not isinstance(values, dict):
        return "the object graph or value table is malformed"
    ids = range(len(nodes))
    for n, node in enumerate(nodes):
        if not isinstance(node, dict):
            return f"object-graph node {n} is not an object"
        children = node.get("children", {})
        if not isinstance(children, dict) or any(c not in ids for c in children.values()):
            return f"object-graph node {n} has bad children"
        if "key" in node and node["key"] not in values:
            return f"object-graph node {n} names value {node['key']!r}, which is not saved"
        for slot in node.get("slots", []):
            if (
                not isinstance(slot, dict)
                or slot.get("variable") not in ids
                or slot.get("node") not in ids
            ):
                return f"object-graph node {n} has a bad slot entry"
    for key, entry in values.items():
        if not isinstance(entry, dict) or not {"array", "dtype", "shape"} <= set(entry):
            return f"value {key!r} has a malformed entry"
    return None


def read_values(prefix: str, index: dict) -> dict[str, np.ndarray]:
    """The saved arrays by key, checked against ``index`` (size, hash, dtypes, shapes).

    Raises:
        NotFoundError: the data file is missing.
        DataLossError: it does not match the index or is not a readable archive.
    """
    path = os.path.join(os.path.dirname(prefix), index["data_file"])
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(
            f"Checkpoint '{prefix}' is incomplete: its data file '{path}' is missing. "
            "Copy both the .index and the .npz file of a checkpoint."
        ) from None
    if len(data) != index["data_bytes"]:
        raise _data_loss(
            prefix,
            f"data file '{path}' has {len(data)} bytes, the index says {index['data_bytes']}",
        )
    if hashlib.sha256(data).hexdigest() != index["data_sha256"]:
        raise _data_loss(prefix, f"data file '{path}' does not match its SHA-256 in the index")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise _data_loss(prefix, f"data file '{path}' is not a readable archive ({exc})") from None
    out = {}
    for key, entry in index["values"].items():
        array = arrays.get(entry["array"])
        if array is None:
            raise _data_loss(prefix, f"value '{key}' ({entry['array']}) is missing from '{path}'")
        if array.dtype.name != entry["dtype"] or list(array.shape) != entry["shape"]:
            raise _data_loss(
                prefix,
                f"value '{key}' is {array.dtype.name}{list(array.shape)} in '{path}' but "
                f"{entry['dtype']}{entry['shape']} in the index",
            )
        out[key] = array
    return out
