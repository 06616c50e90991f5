"""``tf.keras.datasets.mnist``: LeCun, Cortes and Burges's MNIST digits from files on disk.

70,000 28x28 grayscale handwritten digits (60,000 train, 10,000 test). simdist does not
download it; it reads Keras's cached ``mnist.npz`` (``~/.keras/datasets/mnist.npz``) or the
four IDX ``.gz`` files from a folder (``~/.keras/datasets/mnist/`` or ``path``). The IDX files
come from http://yann.lecun.com/exdb/mnist/ ; Keras's ``mnist.npz`` from
https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz .
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

from simdist.keras.datasets import _idx
from simdist.keras.datasets.fashion_mnist import missing_message

__all__ = ["load_data", "SOURCE_URL", "CACHE_SUBDIR"]

SOURCE_URL = "http://yann.lecun.com/exdb/mnist/"
CACHE_SUBDIR = "mnist"
_NPZ_KEYS = ("x_train", "y_train", "x_test", "y_test")


def _load_npz(path: str):
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = [np.asarray(archive[key]) for key in _NPZ_KEYS]
    except (KeyError, ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(
            f"'{path}' is not a valid mnist.npz (needs arrays {list(_NPZ_KEYS)}): {exc}"
        ) from None
    x_train, y_train, x_test, y_test = arrays
    return (x_train, y_train), (x_test, y_test)


def load_data(path=None):
    """Load MNIST: ``(x_train, y_train), (x_test, y_test)``, uint8.

    Args:
        path: an ``.npz`` file (Keras's ``mnist.npz``) or a folder holding the four IDX
            files (``train-images-idx3-ubyte.gz``...). Default: ``mnist.npz`` in Keras's
            cache (``~/.keras/datasets``), else the IDX files in ``~/.keras/datasets/mnist``.

    Raises:
        FileNotFoundError: nothing found (the message says what to put where).
        ValueError: a malformed file.
    """
    if path is not None and os.fspath(path).endswith(".npz"):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"No MNIST archive at '{os.fspath(path)}'.")
        return _load_npz(os.fspath(path))
    if path is None:
        for root in _idx.cache_dirs(""):
            candidate = os.path.join(root, "mnist.npz")
            if os.path.isfile(candidate):
                return _load_npz(candidate)
    folder, searched = _idx.find_folder(path, CACHE_SUBDIR)
    if folder is None:
        raise FileNotFoundError(missing_message("MNIST", searched, SOURCE_URL))
    return _idx.load_idx_split(folder)
