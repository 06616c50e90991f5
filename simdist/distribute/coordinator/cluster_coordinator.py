"""``ClusterCoordinator``: dispatch functions to the workers of a ParameterServerStrategy.

``schedule(fn, args, kwargs)`` queues ``fn`` and returns a ``RemoteValue`` at once; nothing
runs until the coordinator waits (``join``, ``done``, ``fetch``, ``RemoteValue.fetch/get``).
Then the simulated cluster advances (``scheduler``): a worker that takes a closure runs it
at once, as a unit, on that worker (its device, its per-worker iterators), and its writes
to ps variables land when the closure finishes on the simulated clock (``ps_values``), so
steps of different workers overlap and read stale values, and one seed always gives the
same interleaving. Errors follow TF: the first error of a function is raised by the next
``schedule``/``join``/``done`` (and then cleared); functions still queued are cancelled
(their ``RemoteValue`` raises ``CancelledError``). A worker that dies mid-function (fault
plan) commits nothing and the function runs again on another worker: every function's
update is applied exactly once. simdist's own options are keyword-only and prefixed:
``simdist_seed`` (the interleaving), ``simdist_faults`` (a ``FaultPlan``),
``simdist_step_time`` and ``simdist_jitter`` (simulated closure durations).
"""

from __future__ import annotations

import dataclasses

from simdist import errors
from simdist.core import nest
from simdist.core.function import Function
from simdist.core.variables import variable_creator_scope
from simdist.distribute.coordinator.remote_value import (
    PerWorkerDistributedIterator,
    PerWorkerValues,
    RemoteValue,
    RemoteValueImpl,
)
from simdist.distribute.coordinator.scheduler import Scheduler
from simdist.distribute.faults import FaultPlan
from simdist.distribute.ps_values import Transaction

__all__ = ["ClosureRun", "ClusterCoordinator", "PerWorkerDataset"]


@dataclasses.dataclass(frozen=True)
class ClosureRun:
    """One attempt of one scheduled function: ``outcome`` is ``"finished"``, ``"failed"``
    (it raised), or ``"worker_failed"`` (its worker died; the function was requeued)."""

    closure_id: int
    worker: int
    start: float
    end: float
    outcome: str


class _Closure:
    def __init__(self, closure_id: int, fn, args, kwargs, remote_value) -> None:
        self.id = closure_id
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.remote_value = remote_value


def _reject_remote_values(structure) -> None:
    for leaf in nest.flatten(structure):
        if isinstance(leaf, RemoteValue):
            raise ValueError(
                "`tf.distribute.experimental.coordinator.RemoteValue` used as an input to "
                "scheduled function is not yet supported. Fetch it first (value.fetch())."
            )


def _worker_slice(worker: int, structure):
    def pick(x):
        if isinstance(x, PerWorkerValues):
            return x._values[worker].get()
        return x

    return nest.map_structure(pick, structure)


class ClusterCoordinator:
    """``tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)``: one per
    strategy (a second call returns the same object, as TF).

    Args:
        strategy: a ``ParameterServerStrategy``.
        simdist_seed: seed of the simulated interleaving of the workers' steps.
        simdist_faults: a ``FaultPlan`` (worker and ps failures), or its text form.
        simdist_step_time, simdist_jitter: simulated seconds per closure and their spread.

    Raises:
        ValueError: ``strategy`` is not a ``ParameterServerStrategy``; a fault plan naming a
            task the cluster lacks; other simdist options than the existing coordinator's.
    """

    def __new__(cls, strategy, **kwargs):
        existing = getattr(strategy, "_cluster_coordinator", None)
        if existing is not None:
            return existing
        return super().__new__(cls)

    def __init__(
        self,
        strategy,
        *,
        simdist_seed: int = 0,
        simdist_faults: FaultPlan | str | None = None,
        simdist_step_time: float = 1.0,
        simdist_jitter: float = 0.5,
    ) -> None:
        if isinstance(simdist_faults, str):
            simdist_faults = FaultPlan.parse(simdist_faults)
        options = (simdist_seed, simdist_faults or FaultPlan(), simdist_step_time, simdist_jitter)
        if getattr(self, "_initialized", False):
            if options != self._options:
                raise ValueError(
                    "This strategy already has a ClusterCoordinator with other simdist options "
                    f"{self._options}; a strategy has one coordinator (as in TF). Create a new "
                    "strategy for a run with another seed or fault plan."
                )
            return
        if not getattr(strategy, "_is_parameter_server_strategy_v2", False):
            raise ValueError(
                "Only `tf.distribute.experimental.ParameterServerStrategy` is supported to "
                "work with `tf.distribute.experimental.coordinator.ClusterCoordinator` "
                "currently."
            )
        options[1].check(strategy._num_workers, strategy._num_ps)
        self._options = options
        self._strategy = strategy
        self._cluster = strategy.extended._cluster
        self._faults = options[1]
        self._scheduler = Scheduler(strategy._num_workers, simdist_seed, *options[2:])
        self._inflight: dict[int, tuple] = {}
        self._resources: list[tuple] = []  # (builder, per-worker RemoteValues)
        self._error: BaseException | None = None
        self._history: list[ClosureRun] = []
        self._finished = 0
        self._next_id = 0
        strategy.extended._used_with_coordinator = True
        self._fail_due_ps()  # a ps planned to fail after 0 closures is down from the start
        strategy._cluster_coordinator = self
        self._initialized = True

    @property
    def strategy(self):
        """The strategy this coordinator dispatches for."""
        return self._strategy

    @property
    def simdist_history(self) -> tuple[ClosureRun, ...]:
        """Every closure attempt so far, in the order they ended (simdist's addition)."""
        return tuple(self._history)

    @property
    def simdist_time(self) -> float:
        """The simulated clock (seconds)."""
        return self._scheduler.now

    # --- the TF API --------------------------------------------------------------------------
    def schedule(self, fn, args=None, kwargs=None) -> RemoteValue:
        """Queue ``fn(*args, **kwargs)`` for a worker; returns its ``RemoteValue`` at once.

        ``PerWorkerValues`` arguments (per-worker iterators) are replaced by the running
        worker's own value.

        Raises:
            TypeError: ``fn`` is not a ``tf.function``.
            ValueError: a ``RemoteValue`` argument.
            Exception: the first error of an earlier function (then cleared).
        """
        if not isinstance(fn, Function):
            raise TypeError(
                "`tf.distribute.experimental.coordinator.ClusterCoordinator.schedule` only "
                "accepts a `tf.function` or a concrete function. Decorate the step function "
                "with @tf.function."
            )
        args, kwargs = tuple(args or ()), dict(kwargs or {})
        _reject_remote_values((args, kwargs))
        self._raise_if_error()
        remote_value = RemoteValueImpl(self._wait_for)
        self._scheduler.queue.append(_Closure(self._next_id, fn, args, kwargs, remote_value))
        self._next_id += 1
        return remote_value

    def join(self) -> None:
        """Run until every scheduled function has finished.

        Raises:
            Exception: the first error of a function since the last one raised (then
                cleared); queued functions are cancelled.
            UnavailableError: every worker has failed and none rejoins.
        """
        self._run(lambda: not self._scheduler.queue and not self._inflight)
        self._raise_if_error()

    def done(self) -> bool:
        """Whether every scheduled function has finished; advances the simulated cluster by
        one event, so a ``while not coordinator.done()`` loop ends.

        Raises:
            Exception: the first error of a function since the last one raised.
        """
        self._advance()
        self._raise_if_error()
        return not self._scheduler.queue and not self._inflight

    def fetch(self, val):
        """``val`` with every ``RemoteValue`` replaced by its fetched NumPy value."""
        return nest.map_structure(lambda v: v.fetch() if isinstance(v, RemoteValue) else v, val)

    def create_per_worker_dataset(self, dataset_fn) -> PerWorkerDataset:
        """A dataset on every worker, from a function returning a dataset (run on each
        worker; it may not create variables), a ``tf.data.Dataset``, or a dataset this
        strategy distributed. ``iter`` of the result gives the per-worker iterators."""
        from simdist.distribute.parameter_server_strategy import CoordinatorDataset

        if isinstance(dataset_fn, CoordinatorDataset):
            builder = dataset_fn._build
        elif callable(dataset_fn):

            def builder():
                def refuse(next_creator, **kwargs):
                    raise ValueError("Creating variables in `dataset_fn` is not allowed.")

                with variable_creator_scope(refuse):
                    return dataset_fn()

        else:

            def builder():
                return dataset_fn

        return PerWorkerDataset(self, builder)

    # --- per-worker resources ------------------------------------------------------------------
    def _create_per_worker_resources(self, fn) -> tuple[RemoteValueImpl, ...]:
        values = tuple(RemoteValueImpl(self._wait_for) for _ in self._scheduler.workers)
        self._resources.append((fn, values))
        for w in self._scheduler.workers:
            if w.alive:
                self._build_resource(fn, values[w.index], w.index)
            else:
                values[w.index]._set_aborted(errors.UnavailableError("worker is down"))
        return values

    def _build_resource(self, fn, value: RemoteValueImpl, worker: int) -> None:
        try:
            with self._cluster.on_worker(worker, None), self._strategy.scope():
                value._set_values(fn())
        except Exception as exc:  # noqa: BLE001 - the error belongs to the resource
            value._set_error(exc)

    # --- the simulated cluster ------------------------------------------------------------------
    def _raise_if_error(self) -> None:
        if self._error is None:
            return
        self._run(lambda: not self._inflight)
        self._cancel_queue()
        error, self._error = self._error, None
        raise error

    def _cancel_queue(self) -> None:
        while self._scheduler.queue:
            closure = self._scheduler.queue.popleft()
            closure.remote_value._set_error(
                errors.CancelledError(
                    "The corresponding function is cancelled. Please reschedule the function."
                )
            )

    def _wait_for(self, remote_value: RemoteValueImpl) -> None:
        from simdist.distribute.coordinator.remote_value import RemoteValueStatus

        self._run(lambda: remote_value._status is not RemoteValueStatus.NOT_READY)
        if self._error is not None and remote_value._status is RemoteValueStatus.NOT_READY:
            self._run(lambda: not self._inflight)
            self._cancel_queue()

    def _run(self, until) -> None:
        while not until():
            if not self._advance():
                return

    def _advance(self) -> bool:
        """Start what can start, then handle the next event; False when nothing is left."""
        sched = self._scheduler
        if self._error is None:
            for worker, closure in sched.assignments():
                self._start(worker, closure)
        if not sched.has_events():
            if sched.queue and self._error is None and not sched.any_alive():
                self._error = errors.UnavailableError(
                    f"All {len(sched.workers)} workers have failed and none rejoins (fault "
                    f"plan {self._faults}); {len(sched.queue)} scheduled function(s) cannot "
                    "run. (A real coordinator would wait for the workers to come back.)"
                )
            return False
        event = sched.pop()
        if event.kind == "finish":
            self._finish(event.worker)
        elif event.kind == "fail":
            self._worker_failed(event.worker)
        else:
            self._rejoin(event.worker)
        return True

    def _start(self, worker: int, closure: _Closure) -> None:
        sched = self._scheduler
        step = sched.start_step(worker)
        txn = Transaction()
        outputs, error = None, None
        try:
            args = _worker_slice(worker, closure.args)
            kwargs = _worker_slice(worker, closure.kwargs)
            with self._cluster.on_worker(worker, txn), self._strategy.scope():
                outputs = closure.fn(*args, **kwargs)
        except StopIteration:  # next() on an exhausted iterator, as TF reports it
            error = errors.OutOfRangeError("End of sequence")
        except Exception as exc:  # noqa: BLE001 - the function's error goes to its RemoteValue
            error = exc
        duration = sched.duration(worker, step)
        failure = self._faults.worker_failure(worker, step + 1)  # the plan counts from 1
        kind, end = (
            ("fail", sched.now + duration / 2) if failure else ("finish", sched.now + duration)
        )
        self._inflight[worker] = (closure, txn, outputs, error, sched.now, failure)
        sched.plan(end, worker, kind)

    def _finish(self, worker: int) -> None:
        closure, txn, outputs, error, start, _ = self._inflight.pop(worker)
        self._scheduler.idle(worker)
        if error is None and txn.log:
            try:
                if self._cluster.failed_ps:
                    self._cluster.check_ps(min(self._cluster.failed_ps))
                with self._cluster.on_worker(worker, txn):
                    txn.commit()
            except Exception as exc:  # noqa: BLE001 - a failed commit fails the function
                error = exc
        now = self._scheduler.now
        if error is not None:
            closure.remote_value._set_error(error)
            if self._error is None:
                self._error = error
            self._history.append(ClosureRun(closure.id, worker, start, now, "failed"))
            return
        closure.remote_value._set_values(outputs)
        self._history.append(ClosureRun(closure.id, worker, start, now, "finished"))
        self._finished += 1
        self._fail_due_ps()

    def _fail_due_ps(self) -> None:
        for failure in self._faults.ps_failing_after(self._finished):
            self._cluster.fail_ps(
                failure.ps,
                f"simdist fault plan: ps {failure.ps} failed after {self._finished} finished "
                "closures",
            )

    def _worker_failed(self, worker: int) -> None:
        closure, _txn, _out, _err, start, failure = self._inflight.pop(worker)
        sched = self._scheduler
        sched.kill(worker)
        self._history.append(ClosureRun(closure.id, worker, start, sched.now, "worker_failed"))
        if self._error is None:
            sched.queue.append(closure)  # TF's put_back: the end of the queue
        else:
            closure.remote_value._set_error(
                errors.CancelledError(
                    "The corresponding function is cancelled. Please reschedule the function."
                )
            )
        for _fn, values in self._resources:
            values[worker]._set_aborted(errors.UnavailableError(f"worker {worker} failed"))
        if failure.restart_after is not None:
            sched.plan(sched.now + failure.restart_after, worker, "restart")

    def _rejoin(self, worker: int) -> None:
        self._scheduler.revive(worker)
        for fn, values in self._resources:  # as TF: rebuild datasets and iterators from scratch
            self._build_resource(fn, values[worker], worker)


class PerWorkerDataset:
    """Datasets on every worker (``ClusterCoordinator.create_per_worker_dataset``)."""

    def __init__(self, coordinator: ClusterCoordinator, builder) -> None:
        self._coordinator = coordinator
        self._builder = builder

    def build(self) -> PerWorkerValues:
        """Create the dataset on each worker (no iterator)."""
        return PerWorkerValues(self._coordinator._create_per_worker_resources(self._builder))

    def __iter__(self) -> PerWorkerDistributedIterator:
        builder = self._builder
        values = self._coordinator._create_per_worker_resources(lambda: iter(builder()))
        return PerWorkerDistributedIterator(values)
