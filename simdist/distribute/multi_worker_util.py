"""Saving on every worker without races: per-worker paths and the duplicate-path check.

A multi-worker program saves on every worker (reading sync-on-read variables is a
collective, so every worker must take part). The chief's copy is the canonical one; the
others write to temporary paths (:func:`write_filepath`, the Keras multi-worker tutorial's
rule) and may delete them afterwards. Every checkpoint write under a multi-worker strategy
first exchanges the target paths, and two workers writing one path stop with a clear error
instead of mixing their files.
"""

from __future__ import annotations

import os
import shutil

from simdist.distribute.worker_context import current_worker

__all__ = [
    "register_strategy",
    "active_strategy",
    "is_chief",
    "write_filepath",
    "write_dirpath",
    "remove_temp_dir",
    "check_distinct_paths",
]

_process_strategy = None  # a process that is one worker (mpiexec, or a single worker)


def register_strategy(strategy) -> None:
    """Record the multi-worker strategy this worker created last (used by saves)."""
    global _process_strategy
    worker = current_worker()
    if worker is not None:
        worker.strategy = strategy
    else:
        _process_strategy = strategy


def active_strategy():
    """This worker's multi-worker strategy, or ``None``."""
    worker = current_worker()
    return worker.strategy if worker is not None else _process_strategy


def is_chief(strategy=None) -> bool:
    """Whether this worker is the chief (worker 0); True outside a multi-worker strategy."""
    strategy = strategy if strategy is not None else active_strategy()
    return strategy is None or getattr(strategy.extended, "_worker_index", 0) == 0


def write_filepath(filepath: str, strategy=None) -> str:
    """Where this worker should save: ``filepath`` on the chief, else a per-worker temp path.

    The non-chief path is ``<dirname>/workertemp_<task_id>/<basename>``; delete it after
    saving (``shutil.rmtree(os.path.dirname(path))``) if you do not need it.
    """
    strategy = strategy if strategy is not None else active_strategy()
    if is_chief(strategy):
        return filepath
    resolver = strategy.cluster_resolver
    dirpath, base = os.path.split(filepath)
    return os.path.join(dirpath, f"workertemp_{resolver.task_id}", base)


def write_dirpath(dirpath: str, strategy=None) -> str:
    """Where this worker should write a directory: ``dirpath`` on the chief, else
    ``<dirpath>/../workertemp_<task_id>``-style per-worker directory (Keras's rule)."""
    strategy = strategy if strategy is not None else active_strategy()
    if is_chief(strategy):
        return dirpath
    return os.path.join(
        os.path.dirname(os.path.normpath(dirpath)) or ".",
        f"workertemp_{strategy.cluster_resolver.task_id}",
        os.path.basename(os.path.normpath(dirpath)),
    )


def remove_temp_dir(path: str, strategy=None) -> None:
    """Delete a non-chief worker's temporary copy (the directory holding ``path``)."""
    strategy = strategy if strategy is not None else active_strategy()
    if is_chief(strategy):
        return
    directory = os.path.dirname(path)
    if os.path.basename(directory).startswith("workertemp_"):
        shutil.rmtree(directory, ignore_errors=True)


def check_distinct_paths(path: str) -> None:
    """Under a multi-worker strategy: exchange save paths and refuse two workers on one.

    Every worker must call it (it is a collective), as every worker must save.

    Raises:
        ValueError: two workers save to the same path (names them and the fix).
    """
    strategy = active_strategy()
    if strategy is None or strategy.extended._num_workers == 1:
        return
    cdo = strategy.extended._cross_device_ops_impl
    paths = cdo.exchange(("checkpoint_write",), os.path.abspath(os.fspath(path)))
    first: dict[str, int] = {}
    for worker, p in enumerate(paths):
        if p in first:
            raise ValueError(
                f"Workers {first[p]} and {worker} both save to {p!r}: their files would mix. "
                "Save to a different path on each worker: the chief's path is the canonical "
                "copy, the others use simdist.distribute.multi_worker_util.write_filepath(path) "
                "(a workertemp_<task_id> directory)."
            )
        first[p] = worker
