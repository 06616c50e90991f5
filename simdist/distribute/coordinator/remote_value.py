"""``RemoteValue`` (the result of a scheduled function) and ``PerWorkerValues``.

A ``RemoteValue`` is returned at once by ``ClusterCoordinator.schedule``; ``fetch()`` (NumPy)
and ``get()`` (tensors) advance the coordinator's simulated cluster until the function has
run, then return its output or raise its error (``CancelledError`` if it was cancelled
because an earlier function failed).
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from simdist import errors
from simdist.core import nest

__all__ = ["PerWorkerValues", "RemoteValue", "RemoteValueImpl", "RemoteValueStatus"]


class RemoteValueStatus(enum.Enum):
    """Where a ``RemoteValue`` stands."""

    NOT_READY = "NOT_READY"
    ABORTED = "ABORTED"
    READY = "READY"


class RemoteValue:
    """An asynchronously available value of a scheduled function (TF's public interface)."""

    def fetch(self):
        """Wait for the value and return it as NumPy arrays (same structure)."""
        raise NotImplementedError("Must be implemented in subclasses.")

    def get(self):
        """Wait for the value and return it as tensors (same structure)."""
        raise NotImplementedError("Must be implemented in subclasses.")


class RemoteValueImpl(RemoteValue):
    """The coordinator's ``RemoteValue``: ``wait(self)`` runs the cluster until it is set."""

    def __init__(self, wait: Callable[[RemoteValueImpl], None]) -> None:
        self._wait = wait
        self._status = RemoteValueStatus.NOT_READY
        self._values = None
        self._error: BaseException | None = None

    def _set_values(self, values) -> None:
        self._status, self._values, self._error = RemoteValueStatus.READY, values, None

    def _set_error(self, error: BaseException) -> None:
        self._status, self._values, self._error = RemoteValueStatus.READY, None, error

    def _set_aborted(self, error: BaseException) -> None:
        self._status, self._values, self._error = RemoteValueStatus.ABORTED, None, error

    def _get_error(self) -> BaseException | None:
        return self._error

    def _wait_and_maybe_error(self) -> None:
        if self._status is RemoteValueStatus.NOT_READY:
            self._wait(self)
        if self._status is RemoteValueStatus.NOT_READY:
            raise errors.CancelledError(
                "The corresponding function never ran: the coordinator stopped before it "
                "could be scheduled on a worker. Please reschedule the function."
            )
        if self._status is RemoteValueStatus.ABORTED:
            raise errors.CancelledError(
                "The corresponding function is aborted. Please reschedule the function."
            )
        if self._error is not None:
            raise self._error

    def get(self):
        """The output as tensors.

        Raises:
            CancelledError: the function was cancelled or aborted.
            Exception: the error the function raised.
        """
        self._wait_and_maybe_error()
        return self._values

    def fetch(self):
        """The output as NumPy values.

        Raises:
            CancelledError: the function was cancelled or aborted.
            Exception: the error the function raised.
        """
        return nest.map_structure(lambda x: x.numpy() if hasattr(x, "numpy") else x, self.get())

    def __repr__(self) -> str:
        return f"<RemoteValue status={self._status.value}>"


class PerWorkerValues:
    """One value per worker; as an argument of ``schedule`` each worker receives its own.

    Made by ``iter(coordinator.create_per_worker_dataset(...))``.
    """

    def __init__(self, values) -> None:
        self._values = tuple(values)
        for v in self._values:
            if not isinstance(v, RemoteValue):
                raise AssertionError("`PerWorkerValues` should only take `RemoteValue`s.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} over {len(self._values)} workers>"


class PerWorkerDistributedIterator(PerWorkerValues):
    """The per-worker iterators of a per-worker dataset; pass it to ``schedule``."""

    def __next__(self):
        return self.get_next()

    def get_next(self, name=None):
        raise NotImplementedError(
            "Iterating over an `AsyncDistributedIterator` is not supported right now. Pass "
            "the iterator to coordinator.schedule(step_fn, args=(iterator,)) and call "
            "next(iterator) inside step_fn."
        )
