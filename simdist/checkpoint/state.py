"""The ``checkpoint`` state file of a directory: which checkpoint is the latest.

``Checkpoint.save`` records each checkpoint it writes in a text file named ``checkpoint`` in
the checkpoint's directory, in TF's text format (so TF's tools read it, and it reads TF's)::

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-1"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"

Paths inside the directory are stored relative to it (so a directory can be moved), others
absolute. simdist writes no timestamps (results never depend on wall time). The file is
replaced atomically, and updates from threads of one process are serialised.

simdist's first line is a comment, which TF's text-format reader skips: the SHA-256 of the
rest of the file (``# simdist-sha256: <hex>``). A file that starts with ``#`` must carry a
valid one, so any changed byte or truncation of a file simdist wrote is ``DataLossError``
(it could otherwise name another, complete checkpoint). A file without it (TF wrote it) is
read as it is; an empty one is ``DataLossError`` (TF refuses it too).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass, field

from simdist import errors
from simdist.checkpoint.format import atomic_write_bytes, checkpoint_exists

__all__ = [
    "CheckpointState",
    "get_checkpoint_state",
    "latest_checkpoint",
    "update_checkpoint_state",
    "STATE_FILENAME",
]

STATE_FILENAME = "checkpoint"
_update_lock = threading.Lock()
_LINE = re.compile(r'^\s*([A-Za-z_]+)\s*:\s*(?:"((?:[^"\\]|\\.)*)"|[-+0-9.eE]+)\s*$')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\"}
_CHECKSUM = re.compile(r"# simdist-sha256: ([0-9a-f]{64})\n")


def _verified_text(text: str, path: str) -> str:
    """The state file's fields, its checksum line verified when it has one."""
    if not text.strip():
        raise errors.DataLossError(
            f"Checkpoint state file '{path}' is empty (truncated?). Delete it to start over, "
            "or restore from an explicit checkpoint prefix."
        )
    if not text.startswith("#"):
        return text  # written by TensorFlow: no checksum
    match = _CHECKSUM.match(text)
    rest = text[match.end() :] if match else ""
    if match is None or hashlib.sha256(rest.encode("utf-8")).hexdigest() != match.group(1):
        raise errors.DataLossError(
            f"Checkpoint state file '{path}' does not match its SHA-256 line: it was "
            "truncated or altered. Delete it (or fix it) and restore from an explicit "
            "checkpoint prefix."
        )
    return rest


@dataclass
class CheckpointState:
    """The parsed state file (``tf.train.get_checkpoint_state``'s answer).

    Paths are as TF returns them: joined with the directory when stored relative.
    """

    model_checkpoint_path: str
    all_model_checkpoint_paths: list[str] = field(default_factory=list)


def _quote(text: str) -> str:
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{out}"'


def _unquote(text: str, path: str) -> str:
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", text[i + 1 :]).group(0)
            out.append(chr(int(digits, 8)))
            i += 1 + len(digits)
        else:
            raise errors.DataLossError(f"Checkpoint state file '{path}': bad escape \\{nxt}.")
    raw = "".join(out)
    try:  # octal escapes spell UTF-8 bytes
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return raw


def _relative(directory: str, prefix: str) -> str:
    if os.path.dirname(os.path.abspath(prefix)) == os.path.abspath(directory):
        return os.path.basename(prefix)
    return os.path.abspath(prefix)


def _absolute(directory: str, stored: str) -> str:
    return stored if os.path.isabs(stored) else os.path.join(directory, stored)


def _parse(text: str, path: str) -> tuple[str | None, list[str]]:
    latest = None
    every: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            raise errors.DataLossError(
                f"Checkpoint state file '{path}' line {number} is not 'field: \"value\"': "
                f"{line!r}. Fix or delete the file (it only records which checkpoint is latest)."
            )
        name, quoted = match.group(1), match.group(2)
        value = _unquote(quoted, path) if quoted is not None else None
        if value is None:
            continue
        if name == "model_checkpoint_path":
            latest = value
        elif name == "all_model_checkpoint_paths":
            every.append(value)
        # other fields (TF's numeric timestamps) are read past
    return latest, every


def get_checkpoint_state(checkpoint_dir: str) -> CheckpointState | None:
    """The state file of ``checkpoint_dir``, or None when it has none.

    Raises:
        DataLossError: the state file cannot be parsed.
    """
    path = os.path.join(os.fspath(checkpoint_dir), STATE_FILENAME)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except UnicodeDecodeError:
        raise errors.DataLossError(f"Checkpoint state file '{path}' is not UTF-8 text.") from None
    latest, every = _parse(_verified_text(text, path), path)
    if not latest:
        return None
    directory = os.fspath(checkpoint_dir)
    return CheckpointState(
        model_checkpoint_path=_absolute(directory, latest),
        all_model_checkpoint_paths=[_absolute(directory, p) for p in every],
    )


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest checkpoint recorded in ``checkpoint_dir``, or None.

    ``tf.train.latest_checkpoint``: reads the directory's ``checkpoint`` state file and returns
    the path of its ``model_checkpoint_path`` when that checkpoint exists; None when there is
    no state file or the checkpoint's files are gone.

    Args:
        checkpoint_dir: the directory the checkpoints were saved in.
        latest_filename: the state file's name, ``checkpoint`` by default.

    Raises:
        DataLossError: the state file cannot be parsed.
    """
    if latest_filename not in (None, STATE_FILENAME):
        directory = os.fspath(checkpoint_dir)
        path = os.path.join(directory, latest_filename)
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8") as f:
            latest, _ = _parse(_verified_text(f.read(), path), path)
        state = CheckpointState(_absolute(directory, latest)) if latest else None
    else:
        state = get_checkpoint_state(checkpoint_dir)
    if state is None or not checkpoint_exists(state.model_checkpoint_path):
        return None
    return state.model_checkpoint_path


def update_checkpoint_state(
    checkpoint_dir: str, latest: str, all_paths: list[str] | None = None
) -> list[str]:
    """Record ``latest`` as the newest checkpoint of ``checkpoint_dir``.

    Args:
        checkpoint_dir: the directory whose state file is replaced.
        latest: the prefix of the newest checkpoint.
        all_paths: every checkpoint to list, oldest first; by default the paths already
            listed (those whose files still exist) followed by ``latest``.

    Returns:
        The prefixes listed in the new state file, oldest first.
    """
    directory = os.fspath(checkpoint_dir)
    with _update_lock:
        if all_paths is None:
            state = get_checkpoint_state(directory)
            old = state.all_model_checkpoint_paths if state is not None else []
            same = os.path.abspath(latest)
            all_paths = [p for p in old if os.path.abspath(p) != same and checkpoint_exists(p)]
            all_paths.append(latest)
        lines = [f"model_checkpoint_path: {_quote(_relative(directory, latest))}"]
        lines += [
            f"all_model_checkpoint_paths: {_quote(_relative(directory, p))}" for p in all_paths
        ]
        if directory:
            os.makedirs(directory, exist_ok=True)
        text = "\n".join(lines) + "\n"
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        text = f"# simdist-sha256: {digest}\n{text}"
        atomic_write_bytes(os.path.join(directory, STATE_FILENAME), text.encode("utf-8"))
    return list(all_paths)
