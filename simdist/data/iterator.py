"""``tf.data.Iterator``: hands out a dataset's elements as host-CPU Tensors, one at a time."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from simdist import errors
from simdist.core.tensor import Tensor, make_tensor
from simdist.data import structure
from simdist.data.dataset import Dataset

__all__ = ["Iterator", "Optional"]


class Iterator:
    """An iterator over a dataset (``tf.data.Iterator``); elements are host-CPU Tensors.

    Thread-safe: concurrent ``get_next`` calls each receive a distinct element, in order.
    """

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset
        self._source = dataset._iterate()
        self._lock = threading.Lock()
        self._exhausted = False
        self._device = structure.host_device()  # the host of the scope it was made in

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec

    def __iter__(self) -> Iterator:
        return self

    def _next_numpy(self) -> Any:
        with self._lock:
            if self._exhausted:
                raise StopIteration
            try:
                return next(self._source)
            except StopIteration:
                self._exhausted = True
                raise

    def __next__(self) -> Any:
        return structure.to_tensors(self._next_numpy(), self._device)

    def get_next(self, name: str | None = None) -> Any:
        """The next element.

        Raises:
            OutOfRangeError: the dataset is exhausted ("End of sequence").
        """
        try:
            return self.__next__()
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence") from None

    def get_next_as_optional(self) -> Optional:
        """The next element wrapped in an :class:`Optional` (empty at the end)."""
        try:
            return Optional(self.__next__(), True)
        except StopIteration:
            return Optional(None, False)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} element_spec={self.element_spec}>"


class Optional:
    """A value that may be absent (``tf.experimental.Optional``)."""

    def __init__(self, value: Any, has_value: bool) -> None:
        self._value = value
        self._has_value = has_value

    def has_value(self) -> Tensor:
        return make_tensor(np.array(self._has_value))

    def get_value(self) -> Any:
        """The value.

        Raises:
            InvalidArgumentError: the optional is empty.
        """
        if not self._has_value:
            raise errors.InvalidArgumentError("The optional does not have a value.")
        return self._value
