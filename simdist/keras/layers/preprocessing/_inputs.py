"""Input conversion shared by the preprocessing layers: NumPy arrays of tokens or numbers."""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.tensor import Tensor

__all__ = ["as_array", "as_bytes", "adapt_batches", "ragged_call"]


def as_array(values) -> np.ndarray:
    """A NumPy array of ``values`` (tensors are read; strings become ``bytes`` objects).

    Raises:
        TypeError: a RaggedTensor (a layer that takes them maps over its flat values).
    """
    if is_ragged(values):
        raise TypeError(
            "This preprocessing layer does not take a RaggedTensor in simdist; densify it "
            "with rt.to_tensor() first (docs/differences.md)."
        )
    if isinstance(values, Tensor) or hasattr(values, "_to_tensor"):
        return np.asarray(convert_to_tensor(values)._value)
    array = np.asarray(values)
    if array.dtype.kind == "U":
        return np.vectorize(lambda s: str(s).encode("utf-8"), otypes=[object])(array)
    if array.dtype.kind == "S":
        return np.vectorize(bytes, otypes=[object])(array)
    if array.dtype.kind == "O":
        return np.vectorize(
            lambda s: s if isinstance(s, bytes) else str(s).encode("utf-8"), otypes=[object]
        )(array)
    return array


def as_bytes(token) -> bytes:
    return token if isinstance(token, bytes) else str(token).encode("utf-8")


def adapt_batches(data, batch_size=None, steps=None):
    """Yield NumPy batches of ``data``: an array (in ``batch_size`` pieces, or whole) or a
    ``tf.data.Dataset`` (its elements, at most ``steps`` of them).

    Raises:
        ValueError: ``batch_size`` given with a Dataset.
    """
    from simdist.data.dataset import Dataset

    if isinstance(data, Dataset):
        if batch_size is not None:
            raise ValueError("`batch_size` is not supported when adapting to a Dataset.")
        for step, element in enumerate(data):
            if steps is not None and step >= steps:
                return
            yield as_array(element.flat_values if is_ragged(element) else element)
        return
    if is_ragged(data):  # its tokens are what counts
        data = data.flat_values
    array = as_array(data)
    size = batch_size or max(1, len(array))
    if array.ndim == 0:
        yield array.reshape(1)
        return
    for start in range(0, len(array), size):
        yield array[start : start + size]


def ragged_call(layer, inputs, int_output: bool):
    """A lookup or hashing layer's call on a RaggedTensor, as Keras 2: index outputs keep the
    rows (``int_output``); an encoding (multi_hot, count, one_hot) is of each row's indices,
    a dense ``[batch, depth]``."""
    if int_output:
        return inputs.with_flat_values(layer.call(inputs.flat_values))
    indices = inputs.with_flat_values(layer._indices(as_array(inputs.flat_values)))
    return layer._encode_indices(indices.to_tensor(default_value=-1)._value)
