"""keras.datasets loaders on small IDX files written by the tests (nothing is downloaded)."""

import gzip
import os
import struct

import numpy as np
import pytest

from simdist.keras.datasets import _idx, fashion_mnist, mnist

FILES = {
    "train-images-idx3-ubyte.gz": 3,
    "train-labels-idx1-ubyte.gz": 1,
    "t10k-images-idx3-ubyte.gz": 3,
    "t10k-labels-idx1-ubyte.gz": 1,
}


def idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def write_set(folder, n_train=5, n_test=3, seed=0, gz=True):
    rng = np.random.default_rng(seed)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test, dtype=np.uint8),
    }
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        if gz:
            (folder / f"{name}.gz").write_bytes(gzip.compress(idx_bytes(array), mtime=0))
        else:
            (folder / name).write_bytes(idx_bytes(array))
    return arrays


@pytest.mark.parametrize("loader", [fashion_mnist, mnist])
@pytest.mark.parametrize("gz", [True, False])
def test_reads_the_four_files(tmp_path, loader, gz):
    arrays = write_set(tmp_path, gz=gz)
    (x_train, y_train), (x_test, y_test) = loader.load_data(path=tmp_path)
    np.testing.assert_array_equal(x_train, arrays["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(y_train, arrays["train-labels-idx1-ubyte"])
    np.testing.assert_array_equal(x_test, arrays["t10k-images-idx3-ubyte"])
    np.testing.assert_array_equal(y_test, arrays["t10k-labels-idx1-ubyte"])
    assert x_train.dtype == np.uint8 and x_train.shape == (5, 28, 28)
    assert x_train.flags.writeable


def test_default_is_the_keras_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    arrays = write_set(tmp_path / "kh" / "datasets" / "fashion-mnist")
    (_, y_train), _ = fashion_mnist.load_data()
    np.testing.assert_array_equal(y_train, arrays["train-labels-idx1-ubyte"])


def test_mnist_npz_in_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (tmp_path / "datasets").mkdir()
    x = np.zeros((2, 28, 28), np.uint8)
    y = np.array([3, 4], np.uint8)
    np.savez(tmp_path / "datasets" / "mnist.npz", x_train=x, y_train=y, x_test=x, y_test=y)
    (_, y_train), (x_test, _) = mnist.load_data()
    np.testing.assert_array_equal(y_train, y)
    assert x_test.shape == (2, 28, 28)


def test_absent_files_say_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        fashion_mnist.load_data(path=tmp_path)
    message = str(info.value)
    for name in FILES:
        assert name in message
    assert str(tmp_path) in message
    assert "https://github.com/zalandoresearch/fashion-mnist" in message
    assert "does not download" in message


def test_one_file_missing_is_absent(tmp_path):
    write_set(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte.gz"):
        fashion_mnist.load_data(path=tmp_path)


def test_bad_magic_is_value_error(tmp_path):
    write_set(tmp_path)
    bad = idx_bytes(np.zeros(5, np.uint8))
    bad = bad[:2] + bytes([0x0D]) + bad[3:]  # float type code
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(bad))
    with pytest.raises(ValueError, match="magic number"):
        fashion_mnist.load_data(path=tmp_path)


def test_images_file_with_labels_dims_is_value_error(tmp_path):
    write_set(tmp_path)
    labels = idx_bytes(np.zeros(5, np.uint8))
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(gzip.compress(labels))
    with pytest.raises(ValueError, match="3 dimensions"):
        fashion_mnist.load_data(path=tmp_path)


def test_truncated_payload_and_gzip(tmp_path):
    write_set(tmp_path)
    data = idx_bytes(np.zeros((5, 28, 28), np.uint8))[:-10]
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(gzip.compress(data))
    with pytest.raises(ValueError, match="truncated"):
        fashion_mnist.load_data(path=tmp_path)
    whole = gzip.compress(idx_bytes(np.zeros((5, 28, 28), np.uint8)))
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ValueError, match="train-images-idx3-ubyte.gz"):
        fashion_mnist.load_data(path=tmp_path)


def test_count_mismatch(tmp_path):
    write_set(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(idx_bytes(np.zeros(7, np.uint8)))
    )
    with pytest.raises(ValueError, match="do not belong together"):
        fashion_mnist.load_data(path=tmp_path)


def test_read_idx_round_trip_any_shape(tmp_path):
    array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    (tmp_path / "a.idx").write_bytes(idx_bytes(array))
    np.testing.assert_array_equal(_idx.read_idx(str(tmp_path / "a.idx"), 3), array)


def test_the_system_data_set_folder_is_searched_after_the_keras_cache(tmp_path, monkeypatch):
    # Debian's dataset-fashion-mnist package installs /usr/share/datasets/fashion-mnist.
    from simdist.keras.datasets import _idx

    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "empty"))
    monkeypatch.setattr(_idx, "SYSTEM_DATASETS", str(tmp_path / "system"))
    arrays = write_set(tmp_path / "system" / "fashion-mnist")
    (_, y_train), _ = fashion_mnist.load_data()
    np.testing.assert_array_equal(y_train, arrays["train-labels-idx1-ubyte"])
    monkeypatch.setattr(_idx, "SYSTEM_DATASETS", str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
        fashion_mnist.load_data()


_DEBIAN_FASHION = "/usr/share/datasets/fashion-mnist"


@pytest.mark.skipif(
    not os.path.isdir(_DEBIAN_FASHION),
    reason="the real Fashion-MNIST files are not installed here (Debian: apt-get install "
    "dataset-fashion-mnist); the loader is tested on small IDX files above",
)
def test_the_real_fashion_mnist_files_load_as_keras_gives_them():
    (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data(path=_DEBIAN_FASHION)
    assert x_train.shape == (60000, 28, 28) and x_test.shape == (10000, 28, 28)
    assert x_train.dtype == np.uint8 and y_train.dtype == np.uint8
    assert y_train[:10].tolist() == [9, 0, 0, 3, 0, 2, 7, 2, 5, 5]  # as Keras loads them
    assert np.bincount(y_train).tolist() == [6000] * 10
    assert np.bincount(y_test).tolist() == [1000] * 10
