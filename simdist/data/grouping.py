"""Grouping transformations: ``group_by_window``, ``bucket_by_sequence_length``, ``rebatch``.

``group_by_window`` follows TF's ``GroupByWindowDataset``: each element goes to the window
of its key (``key_func``, a scalar int64); a window that reaches its size (``window_size``,
or ``window_size_func(key)``) is handed to ``reduce_func(key, window_dataset)`` and the
dataset it returns is emitted whole before the input is read on; when the input ends, the
windows left are flushed in ascending key order (TF keeps them in a ``std::map``).
``bucket_by_sequence_length`` is TF's composition of it with ``padded_batch``;
``rebatch`` re-cuts batches as ``unbatch().batch(n)`` would (a list of sizes is used in
rotation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from simdist import errors
from simdist.core import nest
from simdist.data import structure
from simdist.data.dataset import INFINITE, UNKNOWN, Dataset, as_count
from simdist.data.functional import call_with_element, normalize_result, probe_spec
from simdist.data.windowing import ElementsDataset

__all__ = ["GroupByWindowDataset", "RebatchDataset", "bucket_by_sequence_length"]


def _scalar_int(value: Any, what: str) -> int:
    array = normalize_result(value, what)
    if not isinstance(array, np.ndarray) or array.ndim != 0 or array.dtype.kind not in "iu":
        raise ValueError(f"`{what}` must return a scalar integer tensor (tf.int64), got {value!r}.")
    return int(array)


class _GroupByWindowDataset(Dataset):
    """Elements grouped by key into windows, each reduced to a dataset and emitted
    (``Dataset.group_by_window``)."""

    def __init__(self, input_dataset, key_func, reduce_func, window_size, window_size_func):
        for name, fn in (("key_func", key_func), ("reduce_func", reduce_func)):
            if not callable(fn):
                raise TypeError(f"`{name}` must be callable, got {type(fn).__name__}.")
        if (window_size is None) == (window_size_func is None):
            raise ValueError(
                "Either the `window_size` argument or the `window_size_func` argument must be "
                "specified (one of them)."
            )
        if window_size is not None:
            size = as_count(window_size, "window_size")
            if size <= 0:
                raise errors.InvalidArgumentError(f"window_size must be positive, got {size}.")
            window_size_func = lambda key: size  # noqa: E731 - one rule for both arguments
        super().__init__((input_dataset,))
        self._key_func, self._reduce_func = key_func, reduce_func
        self._window_size_func = window_size_func

    def _reduce(self, key: int, elements: list) -> Dataset:
        spec = self._input_datasets[0].element_spec
        out = self._reduce_func(
            structure.to_tensors(np.asarray(key, np.int64)), ElementsDataset(elements, spec)
        )
        if not isinstance(out, Dataset):
            raise TypeError(
                f"`reduce_func` must return a tf.data.Dataset, got {type(out).__name__}."
            )
        return out

    def _compute_element_spec(self) -> Any:
        source = self._input_datasets[0]

        def reduced(element):
            return self._reduce(0, [structure.normalize(element)])

        return probe_spec(source, lambda *a: reduced(a[0] if len(a) == 1 else a), _spec)

    def _cardinality(self) -> int:
        return UNKNOWN

    def _iterate(self):
        windows: dict[int, list] = {}
        for element in self._input_datasets[0]._iterate():
            key = _scalar_int(call_with_element(self._key_func, element), "key_func")
            window = windows.setdefault(key, [])
            window.append(element)
            key_tensor = structure.to_tensors(np.asarray(key, np.int64))
            size = _scalar_int(self._window_size_func(key_tensor), "window_size_func")
            if size <= 0:
                raise errors.InvalidArgumentError(
                    f"window_size_func must return a positive size, got {size} for key {key}."
                )
            if len(window) >= size:
                del windows[key]
                yield from self._reduce(key, window)._iterate()
        for key in sorted(windows):
            yield from self._reduce(key, windows[key])._iterate()


def _spec(dataset: Any) -> Any:
    if not isinstance(dataset, Dataset):
        raise TypeError(
            f"`reduce_func` must return a tf.data.Dataset, got {type(dataset).__name__}."
        )
    return dataset.element_spec


def bucket_by_sequence_length(
    dataset: Dataset,
    element_length_func: Callable,
    bucket_boundaries,
    bucket_batch_sizes,
    padded_shapes=None,
    padding_values=None,
    pad_to_bucket_boundary: bool = False,
    no_padding: bool = False,
    drop_remainder: bool = False,
) -> Dataset:
    """``Dataset.bucket_by_sequence_length``: elements batched with others of similar length.

    Bucket ``i`` holds lengths in ``[boundaries[i-1], boundaries[i])`` (the first from minus
    infinity, the last to infinity) and batches ``bucket_batch_sizes[i]`` of them, padded
    to the longest in the batch (or to ``boundary - 1`` with ``pad_to_bucket_boundary``).

    Raises:
        ValueError: ``bucket_batch_sizes`` is not one longer than ``bucket_boundaries``.
    """
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [as_count(b, "bucket_batch_sizes") for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(
            f"len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1 but "
            f"len(bucket_batch_sizes)={len(sizes)} and "
            f"len(bucket_boundaries)={len(boundaries)}"
        )
    lows = [np.iinfo(np.int32).min, *boundaries]
    highs = [*boundaries, np.iinfo(np.int32).max]

    def bucket_of(*element) -> np.int64:
        length = _scalar_int(element_length_func(*element), "element_length_func")
        for bucket, (low, high) in enumerate(zip(lows, highs, strict=True)):
            if low <= length < high:
                return np.int64(bucket)
        raise errors.InvalidArgumentError(f"element length {length} is outside every bucket.")

    def batch_bucket(bucket, window: Dataset) -> Dataset:
        bucket = _int(bucket)
        size = sizes[bucket]
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            if bucket >= len(sizes) - 1:
                raise errors.InvalidArgumentError(
                    "When pad_to_bucket_boundary=True, elements must have length < "
                    f"max(bucket_boundaries) = {max(boundaries)}."
                )
            filler = boundaries[bucket] - 1
        shapes = padded_shapes
        if shapes is None:
            shapes = nest.map_structure(lambda s: s.shape, window.element_spec)
        shapes = nest.map_structure(
            lambda s: [filler if d is None else d for d in _dims(s)], shapes
        )
        return window.padded_batch(size, shapes, padding_values, drop_remainder=drop_remainder)

    return _GroupByWindowDataset(
        dataset, bucket_of, batch_bucket, None, lambda bucket: np.int64(sizes[_int(bucket)])
    )


def _int(value) -> int:
    return int(np.asarray(value._value if hasattr(value, "_value") else value))


def _dims(shape) -> list:
    if hasattr(shape, "as_list"):
        return shape.as_list()
    return list(shape)


class _RebatchDataset(Dataset):
    """Batches re-cut to ``batch_size`` (or a list of sizes used in rotation), as
    ``unbatch().batch(n)`` would cut them (``Dataset.rebatch``)."""

    def __init__(self, input_dataset: Dataset, batch_size, drop_remainder: bool) -> None:
        raw = np.asarray(batch_size._value if hasattr(batch_size, "_value") else batch_size)
        sizes = [as_count(int(v), "batch_size") for v in raw.reshape(-1)]
        if not sizes or any(s <= 0 for s in sizes):
            raise errors.InvalidArgumentError(
                f"batch_size must be a positive integer or a list of them, got {batch_size!r}."
            )
        super().__init__((input_dataset.unbatch(),))  # what it is: unbatch, then batch
        self._sizes, self._drop = sizes, bool(drop_remainder)

    def _compute_element_spec(self) -> Any:
        fixed = self._sizes[0] if self._drop and len(set(self._sizes)) == 1 else None
        return structure.batch_spec(self._input_datasets[0].element_spec, fixed)

    def _cardinality(self) -> int:
        n = self._input_datasets[0]._cardinality()
        return INFINITE if n == INFINITE else UNKNOWN

    def _iterate(self):
        buffer: list = []
        turn = 0
        for element in self._input_datasets[0]._iterate():
            buffer.append(element)
            if len(buffer) == self._sizes[turn % len(self._sizes)]:
                yield structure.stack_elements(buffer)
                buffer, turn = [], turn + 1
        if buffer and not self._drop:
            yield structure.stack_elements(buffer)


GroupByWindowDataset = _GroupByWindowDataset
RebatchDataset = _RebatchDataset
