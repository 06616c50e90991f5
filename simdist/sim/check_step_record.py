"""What one run of a step check records: each ``strategy.run``'s inputs, results, the
aggregated gradients the optimizer received, the weights before and after, metric values,
and notes of the ops that explain differences (with the user's line that called them).

A :class:`Recorder` is installed as :mod:`simdist.core.step_hooks`'s listener for one run.
In ``"replicated"`` mode it records what N replicas see; in ``"single"`` mode it shrinks
the program to one replica (virtual GPUs, TPU slice, virtual cluster) and feeds each
``strategy.run`` the replicated run's whole global batch of that step (every replica's
input, concatenated in replica order), so both runs see the same examples from the same
weights. Code outside ``strategy.run`` that reads ``strategy.num_replicas_in_sync`` (to
size the global batch) sees the replicated run's count in both runs.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import sys
import threading

import numpy as np

from simdist.core import nest, step_hooks
from simdist.core.context import state
from simdist.distribute.worker_context import current_worker

__all__ = ["Recorder", "StepRecord", "Note", "EnoughSteps", "user_site"]

_SIMDIST_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class EnoughSteps(Exception):
    """Raised at the ``strategy.run`` after the last step the check compares (stops the
    user's program there; the check catches it)."""


@dataclasses.dataclass(frozen=True)
class Note:
    """An op of interest: its kind, the (global) replica that ran it or None outside
    ``strategy.run``, the user's ``file:line`` that called it and its details."""

    kind: str
    replica: int | None
    site: str | None
    code: str | None
    details: dict
    depth: int = 0


@dataclasses.dataclass
class StepRecord:
    """One ``strategy.run`` on one worker."""

    index: int
    worker: int
    offset: int  # the global id of this worker's replica 0
    inputs: list = dataclasses.field(default_factory=list)  # [replica][leaf] array or None
    shared: list = dataclasses.field(default_factory=list)  # [leaf] True: same on all replicas
    results: list = dataclasses.field(default_factory=list)  # [replica] scalar leaves (floats)
    names: list = dataclasses.field(default_factory=list)  # variables the optimizer updated
    grads: list = dataclasses.field(default_factory=list)  # aggregated gradients (arrays)
    before: list = dataclasses.field(default_factory=list)
    after: list = dataclasses.field(default_factory=list)
    variables: list = dataclasses.field(default_factory=list)
    metrics: dict = dataclasses.field(default_factory=dict)  # name -> value after the step
    notes: list = dataclasses.field(default_factory=list)


def user_site() -> tuple[str | None, str | None, int]:
    """``("file:line", source line, depth)`` of the innermost caller outside simdist (Nones if
    none); ``depth``: the simdist frames between it and the hook (1: it called the op)."""
    frame = sys._getframe(3)  # above user_site, Recorder.note and step_hooks.note
    depth = 0
    while frame is not None:
        if frame.f_globals.get("__name__") == "simdist.symbolic_dispatch":
            frame = frame.f_back  # a public op's wrapper is part of the op: not a frame more
            continue
        path = os.path.abspath(frame.f_code.co_filename)
        inside = path.startswith(_SIMDIST_ROOT + os.sep) or frame.f_globals.get(
            "__name__", ""
        ).startswith(("simdist.", "threading", "runpy", "concurrent."))
        if not inside and os.path.exists(path):
            line = linecache.getline(path, frame.f_lineno).strip()
            return f"{path}:{frame.f_lineno}", line or None, depth
        depth += 1
        frame = frame.f_back
    return None, None, depth


def _array(leaf):
    value = getattr(leaf, "_value", leaf)
    if isinstance(value, np.ndarray) or np.isscalar(value):
        return np.array(value)
    return None


def _scalars(structure) -> list[float]:
    out = []
    for leaf in nest.flatten(structure):
        value = _array(leaf)
        if value is not None and value.size == 1 and value.dtype.kind == "f":
            out.append(float(value.reshape(())))
    return out


def _worker(strategy) -> tuple[int, int]:
    extended = strategy.extended
    return getattr(extended, "_worker_index", 0), getattr(extended, "_replica_id_offset", 0)


class Recorder(step_hooks.Listener):
    """Listen to one run of the user's program (see the module docstring).

    Args:
        mode: ``"replicated"`` or ``"single"``.
        steps: the number of ``strategy.run`` calls to record; the next one stops the run.
        replicas: in ``"replicated"`` mode, virtual GPUs to give the program (None: its own).
        feed: in ``"single"`` mode, the replicated run's steps (its global batches).
        reported_replicas: in ``"single"`` mode, ``num_replicas_in_sync`` as the user's
            code outside ``strategy.run`` sees it.
    """

    def __init__(self, mode, steps, replicas=None, feed=None, reported_replicas=None) -> None:
        self.mode = mode
        self.max_steps = steps
        self.replicas = replicas
        self.feed = feed or {}
        self.reported_replicas = reported_replicas
        self.steps: dict[int, list[StepRecord]] = {}
        self.num_replicas: int | None = None
        self.strategy_name: str | None = None
        self.outside: list[Note] = []  # notes before the first step
        self._metrics: dict[int, dict[int, object]] = {}  # worker -> id -> metric
        self._current: dict[int, StepRecord] = {}  # worker -> its open step
        self._worker_ids: dict[int, int] = {}  # id(WorkerContext) -> worker index
        self._lock = threading.RLock()

    # --- activation ----------------------------------------------------------------------
    def __enter__(self) -> Recorder:
        step_hooks.set_listener(self)  # refuses while a check or a replay runs
        return self

    def __exit__(self, *exc) -> None:
        step_hooks.set_listener(None)

    # --- hooks ---------------------------------------------------------------------------
    def shape(self, kind: str, value):
        if self.mode == "single":
            if kind == "tpu":
                return "v5litepod-1"
            if value is None:
                return None
            return min(int(value), 1)
        if kind == "gpus" and self.replicas is not None and value is not None:
            return self.replicas
        return value

    def reported(self, strategy, n: int) -> int:
        if self.mode != "single" or self.reported_replicas is None:
            return n
        if state.replica_context is not None:
            return n
        caller = sys._getframe(3)
        if caller.f_globals.get("__name__", "").startswith("simdist."):
            return n
        return self.reported_replicas

    def _close(self, worker: int) -> None:
        record = self._current.pop(worker, None)
        if record is None:
            return
        record.after = [np.array(getattr(v, "_value", v)) for v in map(_read, record.variables)]
        record.variables = []
        for metric in list(self._metrics.get(worker, {}).values()):
            try:
                value = np.asarray(getattr(metric.result(), "_value", metric.result()))
            except Exception:  # noqa: BLE001 - a metric that cannot report yet is skipped
                continue
            if value.size == 1:
                record.metrics[metric.name] = float(value.reshape(()))

    def run_inputs(self, strategy, per_replica: list, given) -> list:
        worker, offset = _worker(strategy)
        previous = self._current.get(worker)
        variables = list(previous.variables) if previous is not None else []
        self._close(worker)  # reads metrics: may meet the other workers (no lock held)
        with self._lock:
            records = self.steps.setdefault(worker, [])
            index = len(records)
            if self.mode == "single" and variables and index in self.feed:
                self._start_from(variables, self.feed[index][0].before)
            if index >= self.max_steps:
                raise EnoughSteps(f"recorded {self.max_steps} steps")
            if self.num_replicas is None:
                self.num_replicas = strategy.extended._num_replicas_in_sync
                self.strategy_name = type(strategy).__name__
            record = StepRecord(index, worker, offset)
            flats = [nest.flatten(replica) for replica in per_replica]
            from simdist.distribute.values import DistributedValues

            given_flat = nest.flatten(given)
            if len(given_flat) == len(flats[0]):
                record.shared = [not isinstance(x, DistributedValues) for x in given_flat]
            else:  # a structure nest sees differently: same object on every replica = shared
                record.shared = [
                    all(flat[i] is flats[0][i] for flat in flats) for i in range(len(flats[0]))
                ]
            record.inputs = [[_array(leaf) for leaf in flat] for flat in flats]
            records.append(record)
            self._current[worker] = record
            self._worker_ids[id(current_worker())] = worker
        if self.mode == "single":
            if len(per_replica) != 1:
                raise ValueError(
                    f"the one-replica run's {type(strategy).__name__} still has "
                    f"{len(per_replica)} replicas (devices named explicitly?); check-step "
                    "shrinks virtual GPUs, launched clusters and TPU slices, not device lists."
                )
            return [self._fed(per_replica[0], index)]
        return per_replica

    @staticmethod
    def _start_from(variables, values) -> None:
        """Give the one-replica run the replicated run's weights at this step's start."""
        for variable, value in zip(variables, values, strict=False):
            if tuple(variable.shape) == value.shape:
                variable.assign(value)

    def _fed(self, replica_args, index: int):
        """This step's inputs replaced by the replicated run's global batch."""
        from simdist.core.convert import convert_to_tensor

        steps = self.feed.get(index)
        if steps is None:
            return replica_args
        inputs = [row for step in steps for row in step.inputs]  # replicas in global order
        flat = nest.flatten(replica_args)
        if len(inputs[0]) != len(flat):
            raise ValueError(
                f"step {index}: strategy.run got {len(flat)} inputs in the one-replica run but "
                f"{len(inputs[0])} in the replicated run; the program must pass the same "
                "structure to strategy.run whatever the replica count."
            )
        fed = []
        for i, leaf in enumerate(flat):
            parts = [replica[i] for replica in inputs]
            if steps[0].shared[i] or any(p is None or p.ndim == 0 for p in parts):
                fed.append(leaf)
                continue
            fed.append(convert_to_tensor(np.concatenate(parts, axis=0)))
        return nest.pack_sequence_as(replica_args, fed)

    values_before = True  # the one-replica run compares each update from the same weights

    def run_finished(self, strategy, results: list) -> None:
        worker, offset = _worker(strategy)
        with self._lock:
            record = self._current.get(worker)
            if record is not None:
                record.results = [_scalars(r) for r in results]

    def gradients_applied(self, strategy, variables, grads, before, aggregated) -> None:
        if not aggregated:
            return  # each replica's own gradients: nothing to compare with one replica
        with self._lock:
            record = self._current.get(_worker(strategy)[0])
            if record is None:
                return
            record.names += [v.name for v in variables]
            record.grads += [np.array(getattr(g, "_value", g)) for g in map(_read, grads)]
            record.before += [np.array(b) for b in before]
            record.variables += list(variables)

    def note(self, kind: str, details: dict) -> None:
        ctx = state.replica_context
        in_replica = ctx is not None and getattr(ctx, "_runner", None) is not None
        if kind in ("reduce", "random", "compute_average_loss", "layer") and not in_replica:
            if kind != "compute_average_loss":
                return
        if kind == "layer":
            if "BatchNormalization" not in type(details["layer"]).__name__:
                return
            details = {"name": details["layer"].name, "cls": type(details["layer"]).__name__}
        if kind == "metric":
            metric = details.pop("metric")
            with self._lock:
                self._metrics.setdefault(self._worker_now(), {}).setdefault(id(metric), metric)
            details = {"name": metric.name}
        if kind == "regularization_losses":
            details = {"name": details["layer"].name}
        replica = None
        worker = self._worker_now()
        if in_replica:
            replica = _worker(ctx.strategy)[1] + ctx._replica_id
        site, code, depth = user_site()
        entry = Note(kind, replica, site, code, details, depth)
        with self._lock:
            record = self._current.get(worker)
            (record.notes if record is not None else self.outside).append(entry)

    def _worker_now(self) -> int:
        ctx = state.replica_context
        if ctx is not None and getattr(ctx, "strategy", None) is not None:
            return _worker(ctx.strategy)[0]
        return self._worker_ids.get(id(current_worker()), 0)

    def finish(self) -> None:
        """Close the open steps (their weights after, metric values)."""
        for worker in list(self._current):
            self._close(worker)


def _read(value):
    """A variable's (or distributed value's) first component as an array-like."""
    values = getattr(value, "values", None)
    if isinstance(values, tuple) and values:
        value = values[0]
    from simdist.core.convert import convert_to_tensor

    return convert_to_tensor(value)
