"""The IDX file format of (Fashion-)MNIST, and finding a data set's files on disk.

An IDX file is a 4-byte magic number ``0x00 0x00 <type> <ndim>`` (type ``0x08``: unsigned
bytes), ``ndim`` big-endian uint32 dimensions, then the values in C order. The data sets ship
them gzipped (``*.gz``). simdist never downloads: the files must already be on disk.
"""

from __future__ import annotations

import gzip
import os
import zlib

import numpy as np

__all__ = ["read_idx", "cache_dirs", "find_folder", "load_idx_split"]

_UBYTE = 0x08

TRAIN_IMAGES = "train-images-idx3-ubyte.gz"
TRAIN_LABELS = "train-labels-idx1-ubyte.gz"
TEST_IMAGES = "t10k-images-idx3-ubyte.gz"
TEST_LABELS = "t10k-labels-idx1-ubyte.gz"
FILES = (TRAIN_LABELS, TRAIN_IMAGES, TEST_LABELS, TEST_IMAGES)  # the order Keras lists them


def _read_bytes(path: str) -> bytes:
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ValueError(
            f"Cannot read '{path}': {exc}. The file is truncated or not gzip data; replace it "
            "with a fresh copy."
        ) from None


def read_idx(path: str, ndim: int) -> np.ndarray:
    """The uint8 array stored in the IDX file ``path`` (gzipped when it ends in ``.gz``).

    Args:
        path: the file.
        ndim: the number of dimensions it must have (3 for images, 1 for labels).

    Returns:
        A read-only-safe copy, dtype uint8, of the stored shape.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not an IDX file of unsigned bytes with ``ndim`` dimensions, or its size
            disagrees with its header.
    """
    data = _read_bytes(path)
    header = 4 + 4 * ndim
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"'{path}' is not an IDX file (bad magic number {data[:4].hex()}).")
    if data[2] != _UBYTE or data[3] != ndim:
        raise ValueError(
            f"'{path}' has IDX magic number 0x{data[:4].hex()}; expected 0x{_UBYTE:06x}{ndim:02x} "
            f"(unsigned bytes, {ndim} dimension{'s' if ndim > 1 else ''})."
        )
    if len(data) < header:
        raise ValueError(f"'{path}' is truncated: its IDX header is incomplete.")
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    expected = header + int(np.prod(dims, dtype=np.int64))
    if len(data) != expected:
        raise ValueError(
            f"'{path}' holds {len(data) - header} values but its header declares shape {dims} "
            f"({expected - header} values): the file is truncated or damaged."
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims).copy()


# Where Debian's data set packages put their files (``apt-get install dataset-fashion-mnist``
# installs /usr/share/datasets/fashion-mnist/*.gz).
SYSTEM_DATASETS = "/usr/share/datasets"


def cache_dirs(subdir: str) -> list[str]:
    """Where data sets are looked for, each + ``subdir``: Keras's cache ``$KERAS_HOME/datasets``
    (default ``~/.keras/datasets``), Keras's fallback ``/tmp/.keras/datasets``, then the
    system's data set folder (:data:`SYSTEM_DATASETS`, filled by Debian packages)."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    roots = [
        os.path.join(home, "datasets"),
        os.path.join("/tmp", ".keras", "datasets"),
        SYSTEM_DATASETS,
    ]
    return [os.path.join(root, subdir) for root in dict.fromkeys(roots)]


def _locate(folder: str, name: str) -> str | None:
    for candidate in (name, name[: -len(".gz")]):  # gzipped, or already unpacked
        path = os.path.join(folder, candidate)
        if os.path.isfile(path):
            return path
    return None


def find_folder(path, subdir: str) -> tuple[str | None, list[str]]:
    """The first folder holding all four files, and the folders searched."""
    folders = [os.fspath(path)] if path is not None else cache_dirs(subdir)
    for folder in folders:
        if all(_locate(folder, name) for name in FILES):
            return folder, folders
    return None, folders


def load_idx_split(folder: str):
    """``(x_train, y_train), (x_test, y_test)`` from the four IDX files in ``folder``.

    Raises:
        ValueError: a malformed file, or image and label counts that differ.
    """
    out = []
    for images_name, labels_name in ((TRAIN_IMAGES, TRAIN_LABELS), (TEST_IMAGES, TEST_LABELS)):
        images_path = _locate(folder, images_name)
        labels_path = _locate(folder, labels_name)
        images = read_idx(images_path, 3)
        labels = read_idx(labels_path, 1)
        if len(images) != len(labels):
            raise ValueError(
                f"'{images_path}' has {len(images)} images but '{labels_path}' has "
                f"{len(labels)} labels; the files do not belong together."
            )
        out.append((images, labels))
    return tuple(out)
