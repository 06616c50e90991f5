"""load_model on an existing path that is not a saved model says so, not 'No file found'."""

import pytest

import simdist as tf


def test_existing_file_that_is_not_a_model(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(tf.errors.DataLossError, match="is not a simdist bundle") as info:
        tf.keras.models.load_model(str(path))
    assert "No file or directory found" not in str(info.value)


def test_existing_directory_that_is_not_a_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a simdist saved model") as info:
        tf.keras.models.load_model(str(tmp_path))
    assert "No file or directory found" not in str(info.value)
