"""``get_file`` and ``plot_model``: what simdist cannot do, refused with the reason.

* ``get_file`` downloads nothing (simdist runs offline and fetches no data). A file already
  in Keras's cache (``cache_dir/cache_subdir/fname``, by default ``~/.keras/datasets``) is
  returned as Keras 2 returns it without downloading, after checking ``file_hash`` when one
  is given (and extracted with ``extract=True``, as Keras does); otherwise ConnectionError.
* ``plot_model`` needs pydot and graphviz, which simdist does not use: ImportError (Keras
  2's error when they are missing); ``model.summary()`` prints the structure.
"""

from __future__ import annotations

import hashlib
import os
import shutil

__all__ = ["get_file", "plot_model", "model_to_dot"]


def _hash_of(path: str, algorithm: str) -> str:
    digest = hashlib.md5() if algorithm == "md5" else hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def get_file(
    fname=None,
    origin=None,
    untar=False,
    md5_hash=None,
    file_hash=None,
    cache_subdir="datasets",
    hash_algorithm="auto",
    extract=False,
    archive_format="auto",
    cache_dir=None,
):
    """The path of ``fname`` in Keras's cache; simdist never downloads ``origin``.

    Raises:
        ConnectionError: the file is not in the cache (the message says where to put it).
        ValueError: neither ``fname`` nor ``origin``; a cached file whose hash differs.
    """
    if origin is None and fname is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if fname is None:
        fname = os.path.basename(str(origin).split("?")[0])
    cache_dir = os.path.expanduser(cache_dir or os.path.join("~", ".keras"))
    directory = os.path.join(cache_dir, cache_subdir)
    path = os.path.join(directory, os.fspath(fname))
    archive = path + ".tar.gz" if untar else path
    if not os.path.exists(archive):
        raise ConnectionError(
            f"simdist does not download files: {origin!r} was not fetched. Put the file at "
            f"'{archive}' (Keras's cache, where get_file looks first) and get_file returns "
            "that path, as Keras does for a cached file."
        )
    expected = file_hash or md5_hash
    if expected is not None:
        algorithm = hash_algorithm
        if algorithm == "auto":
            algorithm = "sha256" if len(expected) == 64 else "md5"
        if md5_hash is not None and file_hash is None:
            algorithm = "md5"
        if _hash_of(archive, algorithm) != expected:
            raise ValueError(
                f"The cached file '{archive}' does not match the expected {algorithm} hash "
                f"{expected}; simdist cannot download a fresh copy."
            )
    if untar:
        if not os.path.exists(path):
            shutil.unpack_archive(archive, directory, "gztar")
        return path
    if extract:
        formats = {"tar": ["tar", "gztar", "bztar", "xztar"], "zip": ["zip"]}
        names = ["tar", "zip"] if archive_format == "auto" else [archive_format]
        for name in names or []:
            for fmt in formats.get(name, []):
                try:
                    shutil.unpack_archive(archive, directory, fmt)
                    return path
                except (shutil.ReadError, ValueError):
                    continue
    return path


def plot_model(model, to_file="model.png", *args, **kwargs):
    """Refused: needs pydot and graphviz (see the module).

    Raises:
        ImportError: always.
    """
    raise ImportError(
        "You must install pydot (`pip install pydot`) and install graphviz "
        "(see instructions at https://graphviz.gitlab.io/download/) for plot_model to work; "
        "simdist does not draw models. model.summary() prints the layers and their shapes."
    )


def model_to_dot(model, *args, **kwargs):
    """Refused as :func:`plot_model` is.

    Raises:
        ImportError: always.
    """
    plot_model(model)
