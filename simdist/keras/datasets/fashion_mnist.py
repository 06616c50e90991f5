"""``tf.keras.datasets.fashion_mnist``: Zalando's Fashion-MNIST from IDX files on disk.

70,000 28x28 grayscale images of 10 clothing classes (60,000 train, 10,000 test), by Zalando
Research, MIT licence: https://github.com/zalandoresearch/fashion-mnist . simdist does not
download it; put the four ``.gz`` files in ``~/.keras/datasets/fashion-mnist/`` (where Keras
caches them), pass their folder as ``path``, or on Debian and Ubuntu install the package
``dataset-fashion-mnist`` (it puts them in ``/usr/share/datasets/fashion-mnist``, which is
searched too).
"""

from __future__ import annotations

from simdist.keras.datasets import _idx

__all__ = ["load_data", "SOURCE_URL", "CACHE_SUBDIR"]

SOURCE_URL = "https://github.com/zalandoresearch/fashion-mnist"
CACHE_SUBDIR = "fashion-mnist"


def load_data(path=None):
    """Load Fashion-MNIST: ``(x_train, y_train), (x_test, y_test)``.

    Args:
        path: a folder holding ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
            ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz`` (or the same
            names unpacked, without ``.gz``). Default: Keras's cache folder,
            ``$KERAS_HOME/datasets/fashion-mnist`` (``~/.keras/datasets/fashion-mnist``),
            then ``/usr/share/datasets/fashion-mnist`` (Debian's ``dataset-fashion-mnist``).

    Returns:
        uint8 arrays: ``x_train`` (60000, 28, 28), ``y_train`` (60000,), ``x_test``
        (10000, 28, 28), ``y_test`` (10000,), labels 0-9.

    Raises:
        FileNotFoundError: the files are not there (the message says where to put them and
            where they come from; nothing is downloaded).
        ValueError: a file is not a valid IDX file of unsigned bytes.
    """
    folder, searched = _idx.find_folder(path, CACHE_SUBDIR)
    if folder is None:
        raise FileNotFoundError(
            missing_message("Fashion-MNIST", searched, SOURCE_URL)
            + " On Debian or Ubuntu, `apt-get install dataset-fashion-mnist` installs them."
        )
    return _idx.load_idx_split(folder)


def missing_message(name: str, searched: list[str], url: str) -> str:
    """What to do when the files are absent (shared with ``mnist``)."""
    where = " or ".join(f"'{f}'" for f in searched)
    return (
        f"{name} files not found in {where}. simdist does not download data sets. Put these "
        f"four files in that folder (or pass their folder as load_data(path=...)): "
        f"{', '.join(_idx.FILES)}. They come from {url}. Without them, "
        "simdist.sim.load_synthetic_digits() gives a download-free set of the same shapes."
    )
