"""``tf.data.Iterator``: hands out a dataset's elements as host-CPU Tensors, one at a time.

An iterator is trackable (``simdist.core.trackable``): ``tf.train.Checkpoint(iterator=it)``
saves its input position (``ITERATOR_STATE``, see ``simdist.data.iterator_state``) and a
restore continues at the next element the saved iterator would have given.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from simdist import errors
from simdist.core.tensor import Tensor, make_tensor
from simdist.core.trackable import Trackable
from simdist.data import structure
from simdist.data.dataset import Dataset
from simdist.data.iterator_state import ITERATOR_STATE, Position

__all__ = ["Iterator", "Optional"]


class Iterator(Trackable):
    """An iterator over a dataset (``tf.data.Iterator``); elements are host-CPU Tensors.

    Thread-safe: concurrent ``get_next`` calls each receive a distinct element, in order.
    """

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset
        self._source = dataset._iterate()
        self._lock = threading.Lock()
        self._exhausted = False
        self._device = structure.host_device()  # the host of the scope it was made in
        self._position = Position([dataset], "Iterator")

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
                return self._position.pull(self._source.__next__)
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

    # --- the trackable protocol: the input position ---------------------------------------
    def _serialize_to_tensors(self) -> dict[str, np.ndarray]:
        with self._lock:
            return {ITERATOR_STATE: self._position.state()}

    def _validate_restore(self, tensors: dict[str, np.ndarray]) -> None:
        self._position.check(tensors[ITERATOR_STATE])

    def _restore_from_tensors(self, tensors: dict[str, np.ndarray]) -> None:
        with self._lock:
            position = Position([self._dataset], "Iterator")
            document = position.check(tensors[ITERATOR_STATE])
            source = self._dataset._iterate()
            ended = []

            def pull_once():
                try:
                    next(source)
                except StopIteration:
                    ended.append(True)

            position.replay(document, pull_once)
            self._source, self._position, self._exhausted = source, position, bool(ended)


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
