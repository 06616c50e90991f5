"""Reading values by key: list_variables, load_variable, load_checkpoint."""

import numpy as np
import pytest

import simdist as tf
from simdist import errors, train


def test_list_and_load_from_a_prefix_or_a_directory(tmp_path):
    ckpt = train.Checkpoint(b=tf.Variable([1, 2, 3]), a=tf.Variable(2.5))
    path = ckpt.save(str(tmp_path / "ckpt"))
    expected = [
        ("a/.ATTRIBUTES/VARIABLE_VALUE", []),
        ("b/.ATTRIBUTES/VARIABLE_VALUE", [3]),
        ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", []),
    ]
    assert train.list_variables(path) == expected
    assert train.list_variables(str(tmp_path)) == expected
    np.testing.assert_array_equal(
        train.load_variable(str(tmp_path), "b/.ATTRIBUTES/VARIABLE_VALUE"), [1, 2, 3]
    )
    reader = train.load_checkpoint(path)
    assert reader.get_variable_to_dtype_map()["a/.ATTRIBUTES/VARIABLE_VALUE"] == tf.float32
    assert reader.has_tensor("a/.ATTRIBUTES/VARIABLE_VALUE")


def test_unknown_key_and_empty_directory_are_not_found(tmp_path):
    path = train.Checkpoint(a=tf.Variable(1)).write(str(tmp_path / "w"))
    with pytest.raises(errors.NotFoundError, match="Key nope not found"):
        train.load_variable(path, "nope")
    with pytest.raises(errors.NotFoundError, match="Unable to find a checkpoint"):
        train.list_variables(str(tmp_path))
