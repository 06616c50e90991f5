"""Reading a checkpoint's values by key, without an object graph (``tf.train.load_variable``)."""

from __future__ import annotations

import os

import numpy as np

from simdist import errors
from simdist.checkpoint.format import read_index, read_values
from simdist.checkpoint.state import latest_checkpoint

__all__ = ["CheckpointReader", "load_checkpoint", "list_variables", "load_variable"]


def _prefix(ckpt_dir_or_file) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise errors.NotFoundError(
                f"Unable to find a checkpoint in directory '{path}': it has no 'checkpoint' "
                "state file naming an existing checkpoint. Pass a checkpoint prefix instead."
            )
        return latest
    return path


class CheckpointReader:
    """The saved values of one checkpoint, by key (``tf.train.load_checkpoint``'s answer).

    Args:
        ckpt_dir_or_file: a checkpoint prefix, or a directory (its latest checkpoint).

    Raises:
        NotFoundError: no checkpoint there.
        DataLossError: its files are damaged.
    """

    def __init__(self, ckpt_dir_or_file) -> None:
        prefix = _prefix(ckpt_dir_or_file)
        self._prefix = prefix
        self._values = read_values(prefix, read_index(prefix))  # every file verified

    def _key(self, name: str) -> str:
        if name in self._values:
            return name
        if name.endswith(":0") and name[:-2] in self._values:
            return name[:-2]
        raise errors.NotFoundError(
            f"Key {name} not found in checkpoint '{self._prefix}'. Keys look like "
            "'model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE'; see "
            "tf.train.list_variables."
        )

    def has_tensor(self, name: str) -> bool:
        return name in self._values

    def get_tensor(self, name: str) -> np.ndarray:
        """A copy of the value saved under ``name``.

        Raises:
            NotFoundError: no such key.
        """
        return np.array(self._values[self._key(name)])

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {k: list(v.shape) for k, v in sorted(self._values.items())}

    def get_variable_to_dtype_map(self) -> dict:
        from simdist.core import dtypes

        return {k: dtypes.as_dtype(v.dtype) for k, v in sorted(self._values.items())}


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A ``CheckpointReader`` for a checkpoint prefix or a directory's latest checkpoint."""
    return CheckpointReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file) -> list[tuple[str, list[int]]]:
    """``(key, shape)`` of every saved value, sorted by key."""
    return sorted(CheckpointReader(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name: str) -> np.ndarray:
    """The value saved under ``name``.

    Raises:
        NotFoundError: no checkpoint, or no such key.
    """
    return CheckpointReader(ckpt_dir_or_file).get_tensor(name)
