"""``os.environ`` during a virtual cluster: each worker thread sees its own ``TF_CONFIG``.

A real cluster runs one process per task, and the multi-worker tutorials' ``main.py`` reads
its task from the environment itself (``json.loads(os.environ["TF_CONFIG"])``).
:func:`simdist.sim.launch` runs the tasks as threads of one process, so while a launch runs,
``os.environ`` is replaced by a :class:`WorkerEnviron`: a mapping over the real environment
in which the per-process variables (:data:`PER_WORKER`, i.e. ``TF_CONFIG``) are per worker
thread. On a worker thread, reading ``os.environ["TF_CONFIG"]`` (or ``os.getenv``) gives that
worker's TF_CONFIG; setting or deleting it changes that worker's only, as in its own
process. Every other variable, and every thread that is not a worker, goes to the real
environment unchanged. When the last running launch ends, the real ``os.environ`` object is
put back.

Limits (said, not hidden): a worker's own ``TF_CONFIG`` is not exported to the C environment,
so a subprocess started by a worker inherits the process's (pass ``env=os.environ.copy()``,
which includes the worker's); code that kept a reference to the original ``os.environ``
object from before the launch (``from os import environ``) sees the process's value; and
threads a worker starts itself (a strategy's replica threads) are not the worker thread, so
they see the process's value too (read TF_CONFIG on the worker's main thread, as the
tutorials do).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, MutableMapping

__all__ = ["PER_WORKER", "WorkerEnviron", "worker_environ", "set_worker_variables"]

PER_WORKER = ("TF_CONFIG",)
"""The variables a worker has of its own (the others are the process's)."""

_ABSENT = object()
_local = threading.local()  # .variables: {name: value or _ABSENT} on a worker thread
_lock = threading.Lock()
_installs = 0
_real: MutableMapping[str, str] | None = None


def _own() -> dict | None:
    return getattr(_local, "variables", None)


class WorkerEnviron(MutableMapping):
    """``os.environ`` with :data:`PER_WORKER` variables per worker thread (see module doc)."""

    def __init__(self, real: MutableMapping[str, str]) -> None:
        self._real = real

    def __getitem__(self, key: str) -> str:
        own = _own()
        if own is not None and key in PER_WORKER:
            value = own.get(key, _ABSENT)
            if value is _ABSENT:
                raise KeyError(key)
            return value
        return self._real[key]

    def __setitem__(self, key: str, value: str) -> None:
        own = _own()
        if own is not None and key in PER_WORKER:
            if not isinstance(value, str):
                raise TypeError(f"str expected, not {type(value).__name__}")
            own[key] = value
            return
        self._real[key] = value

    def __delitem__(self, key: str) -> None:
        own = _own()
        if own is not None and key in PER_WORKER:
            if own.get(key, _ABSENT) is _ABSENT:
                raise KeyError(key)
            own[key] = _ABSENT
            return
        del self._real[key]

    def _items(self) -> dict[str, str]:
        items = dict(self._real)
        own = _own()
        if own is not None:
            for key in PER_WORKER:
                value = own.get(key, _ABSENT)
                if value is _ABSENT:
                    items.pop(key, None)
                else:
                    items[key] = value
        return items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __contains__(self, key: object) -> bool:
        own = _own()
        if own is not None and key in PER_WORKER:
            return own.get(key, _ABSENT) is not _ABSENT
        return key in self._real

    def copy(self) -> dict[str, str]:
        """A plain dict of what this thread sees (for ``subprocess``'s ``env=``)."""
        return self._items()

    def __repr__(self) -> str:
        return f"WorkerEnviron({self._items()!r})"


@contextlib.contextmanager
def worker_environ() -> Iterator[None]:
    """Replace ``os.environ`` by a :class:`WorkerEnviron` while the block runs (nests)."""
    global _installs, _real
    with _lock:
        if _installs == 0:
            _real = os.environ
            os.environ = WorkerEnviron(_real)  # type: ignore[assignment]  # noqa: B003 - a view, by design
        _installs += 1
    try:
        yield
    finally:
        with _lock:
            _installs -= 1
            if _installs == 0:
                os.environ = _real  # type: ignore[assignment]  # noqa: B003 - the original object back
                _real = None


def set_worker_variables(variables: dict[str, str] | None) -> None:
    """Make the current thread a worker with these per-worker variables (None: not a worker)."""
    if variables is None:
        _local.variables = None
        return
    unknown = set(variables) - set(PER_WORKER)
    if unknown:
        raise ValueError(f"{sorted(unknown)} are not per-worker variables; those are {PER_WORKER}.")
    _local.variables = dict(variables)
