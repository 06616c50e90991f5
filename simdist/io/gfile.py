"""``tf.io.gfile``: TF's file API over the local file system, with TF's error classes.

Paths are local paths (or ``file://`` URLs). A missing file raises
``tf.errors.NotFoundError``, an existing destination ``AlreadyExistsError``, a failed
operation ``PermissionDeniedError`` or ``FailedPreconditionError`` where TF raises them.
Remote schemes (``gs://``, ``s3://``, ``hdfs://``) are refused with ``UnimplementedError``:
simdist reaches no file system but the local one.
"""

from __future__ import annotations

import dataclasses
import glob as _glob
import os
import shutil
from collections.abc import Iterator

from simdist import errors

__all__ = [
    "GFile",
    "copy",
    "exists",
    "get_registered_schemes",
    "glob",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
    "StatResult",
]


def _local(path) -> str:
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode()
    if path.startswith("file://"):
        return path[len("file://") :]
    scheme, sep, _ = path.partition("://")
    if sep and scheme.isidentifier():
        raise errors.UnimplementedError(
            f"File system scheme '{scheme}' not implemented (file: '{path}'): simdist reads and "
            "writes local paths only."
        )
    return path


def _not_found(path: str) -> errors.NotFoundError:
    return errors.NotFoundError(f"{path}; No such file or directory")


def get_registered_schemes() -> list[str]:
    """The schemes this gfile serves: the local file system only."""
    return ["", "file"]


def join(path, *paths) -> str:
    """Join path components with ``/`` (``tf.io.gfile.join``)."""
    return os.path.join(os.fspath(path), *map(os.fspath, paths))


def exists(path) -> bool:
    """Whether ``path`` exists."""
    return os.path.exists(_local(path))


def isdir(path) -> bool:
    """Whether ``path`` is a directory."""
    return os.path.isdir(_local(path))


def listdir(path) -> list[str]:
    """The entries of a directory (no ``.`` or ``..``), sorted (TF: file-system order).

    Raises:
        NotFoundError: the directory does not exist.
    """
    local = _local(path)
    if not os.path.isdir(local):
        raise _not_found(local)
    return sorted(os.listdir(local))


def glob(pattern) -> list[str]:
    """The paths matching ``pattern`` (``*``, ``?``, ``[...]``), sorted; ``[]`` when none."""
    if isinstance(pattern, (list, tuple)):
        return sorted({p for one in pattern for p in glob(one)})
    return sorted(_glob.glob(_local(pattern)))


def makedirs(path) -> None:
    """Create a directory and its parents; an existing directory is fine (as in TF)."""
    local = _local(path)
    if os.path.exists(local) and not os.path.isdir(local):
        raise errors.FailedPreconditionError(f"{local} exists and is not a directory")
    os.makedirs(local, exist_ok=True)


def mkdir(path) -> None:
    """Create one directory (an existing directory is fine, as in TF 2.21).

    Raises:
        FailedPreconditionError: ``path`` exists and is a file.
        NotFoundError: its parent does not exist.
    """
    local = _local(path)
    if os.path.isdir(local):
        return
    try:
        os.mkdir(local)
    except FileExistsError:
        raise errors.FailedPreconditionError(f"{local} exists and is not a directory") from None
    except FileNotFoundError:
        raise _not_found(local) from None


def remove(path) -> None:
    """Delete a file.

    Raises:
        NotFoundError: it does not exist.
    """
    local = _local(path)
    if not os.path.isfile(local) and not os.path.islink(local):
        raise _not_found(local)
    os.remove(local)


def rmtree(path) -> None:
    """Delete a directory and everything in it.

    Raises:
        NotFoundError: it does not exist.
    """
    local = _local(path)
    if not os.path.isdir(local):
        raise _not_found(local)
    shutil.rmtree(local)


def _check_destination(dst: str, overwrite: bool) -> None:
    if os.path.exists(dst) and not overwrite:
        raise errors.AlreadyExistsError(f"file already exists: {dst} (pass overwrite=True)")


def copy(src, dst, overwrite: bool = False) -> None:
    """Copy a file.

    Raises:
        NotFoundError: ``src`` does not exist.
        AlreadyExistsError: ``dst`` exists and ``overwrite`` is False.
    """
    source, dest = _local(src), _local(dst)
    if not os.path.isfile(source):
        raise _not_found(source)
    _check_destination(dest, overwrite)
    shutil.copyfile(source, dest)


def rename(src, dst, overwrite: bool = False) -> None:
    """Rename (move) a file or directory, atomically on one file system.

    Raises:
        NotFoundError: ``src`` does not exist.
        AlreadyExistsError: ``dst`` exists and ``overwrite`` is False.
    """
    source, dest = _local(src), _local(dst)
    if not os.path.exists(source):
        raise _not_found(source)
    _check_destination(dest, overwrite)
    os.replace(source, dest)


@dataclasses.dataclass(frozen=True)
class StatResult:
    """``tf.io.gfile.stat``'s result: ``length`` (bytes), ``mtime_nsec``, ``is_directory``."""

    length: int
    mtime_nsec: int
    is_directory: bool


def stat(path) -> StatResult:
    """Size, modification time and kind of ``path``.

    Raises:
        NotFoundError: it does not exist.
    """
    local = _local(path)
    try:
        info = os.stat(local)
    except FileNotFoundError:
        raise _not_found(local) from None
    return StatResult(info.st_size, info.st_mtime_ns, os.path.isdir(local))


def walk(top, topdown: bool = True, onerror=None) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(dirname, subdirs, files)`` for each directory under ``top`` (nothing if missing)."""
    for dirname, subdirs, files in os.walk(_local(top), topdown=topdown, onerror=onerror):
        subdirs.sort()
        yield dirname, subdirs, sorted(files)


class GFile:
    """``tf.io.gfile.GFile(name, mode="r")``: a file object with TF's errors.

    Modes are Python's (``"r"``, ``"w"``, ``"a"``, with ``"b"`` for bytes); text is UTF-8.
    Usable as a context manager and as an iterator of lines.

    Raises:
        NotFoundError: reading a file that does not exist (or writing into a missing
            directory).
        PermissionDeniedError: the file may not be opened so.
    """

    def __init__(self, name, mode: str = "r") -> None:
        self.name = _local(name)
        self.mode = mode
        binary = "b" in mode
        try:
            self._file = open(self.name, mode, **({} if binary else {"encoding": "utf-8"}))
        except FileNotFoundError:
            raise _not_found(self.name) from None
        except PermissionError:
            raise errors.PermissionDeniedError(f"{self.name}; Permission denied") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(f"{self.name}; Is a directory") from None

    def read(self, n: int = -1):
        return self._file.read(n)

    def readline(self):
        return self._file.readline()

    def readlines(self):
        return self._file.readlines()

    def write(self, data) -> None:
        self._file.write(data)

    def flush(self) -> None:
        self._file.flush()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def size(self) -> int:
        """The file's size in bytes."""
        self._file.flush()
        return os.path.getsize(self.name)

    def close(self) -> None:
        self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def __iter__(self):
        return iter(self._file)

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
