"""``simdist.sim.check_step``: is a training step on N replicas the step on one replica?

A user's program runs twice: on N replicas (each with B/N of a global batch of B) and on one
replica with the whole batch B, from the same initial weights and the same examples (the
one-replica run is fed, at every ``strategy.run``, the replicated run's global batch of that
step). Hooks inside simdist (:mod:`simdist.core.step_hooks`) capture each step's inputs and
results, the aggregated gradients as they reach ``optimizer.apply_gradients``, the weights
before and after, and metric values; no change to the program is needed. The report
(:mod:`simdist.sim.check_step_report`) compares them per variable and names the likely
cause of a difference, with the user's line to change; the input check
(:mod:`simdist.sim.check_input`) looks at what each replica received.

Two ways in:

* :func:`check_step` for a step function, a model function and a dataset function;
* :func:`check_script` (``simdist check-step SCRIPT``) for an unmodified script that builds
  its own strategy, model, dataset and ``train_step`` (TF's custom-training tutorial, a
  Keras ``fit``, a ``MultiWorkerMirroredStrategy`` program run as a virtual cluster, a
  ``TPUStrategy`` loop).

In the one-replica run, device and cluster requests shrink to one replica (virtual GPUs,
a launched cluster's workers and devices, the TPU slice: ``v5litepod-1``), and code outside
``strategy.run`` that reads ``strategy.num_replicas_in_sync`` (typically to size the global
batch) reads the replicated run's N, so the program builds the same global batch.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from collections.abc import Callable, Sequence

from simdist.core.context import state
from simdist.core.random import RandomState
from simdist.sim.check_input import input_findings
from simdist.sim.check_step_record import EnoughSteps, Recorder
from simdist.sim.check_step_report import StepCheckReport, compare

__all__ = ["check_step", "check_script", "STRATEGIES"]

STRATEGIES = ("mirrored", "multi_worker", "tpu")
_TPU_TYPES = {1: "v5litepod-1", 2: "v3-2", 4: "v5litepod-4", 8: "v5litepod-8", 16: "v5litepod-16"}


@contextlib.contextmanager
def _fresh_program():
    """A fresh runtime, random state and Keras names for one run of the program."""
    from simdist.keras import backend
    from simdist.testing.runtime import fresh_runtime

    saved_random = getattr(state, "random_state", None)
    saved_uids = dict(backend._uids())
    backend._uids().clear()
    state.random_state = RandomState()
    try:
        with fresh_runtime():
            yield
    finally:
        state.random_state = saved_random
        backend._uids().clear()
        backend._uids().update(saved_uids)


def _run(program: Callable[[], object], recorder: Recorder) -> Recorder:
    from simdist.distribute.virtual_devices import set_virtual_devices

    with _fresh_program(), recorder:
        try:
            if recorder.mode == "single":
                set_virtual_devices(gpus=1)  # a host of one GPU unless the program asks
            program()
        except EnoughSteps:
            pass
        except SystemExit as exc:
            if exc.code not in (None, 0):
                raise
        except Exception as exc:
            if not _stopped(exc):
                raise
        finally:
            recorder.finish()
    return recorder


def _stopped(exc: BaseException) -> bool:
    """The check's own stop, raised on a worker and re-raised by the launcher."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, EnoughSteps):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _compare_runs(
    program: Callable[[], object], steps: int, replicas: int | None
) -> StepCheckReport:
    replicated = _run(program, Recorder("replicated", steps, replicas=replicas))
    if not replicated.steps:
        raise ValueError(
            "the program never called strategy.run, so there is no step to check; call "
            "strategy.run (or model.fit) under a tf.distribute strategy."
        )
    workers = sorted(replicated.steps)
    count = min(len(replicated.steps[w]) for w in workers)
    rep_steps = [[replicated.steps[w][k] for w in workers] for k in range(count)]
    if not any(s.grads for s in rep_steps[0]):
        raise ValueError(
            "no gradients reached optimizer.apply_gradients inside strategy.run in the first "
            "step; check-step compares training steps (apply the gradients with a Keras "
            "optimizer inside the replica function, or use model.fit)."
        )
    feed = dict(enumerate(rep_steps))
    single = _run(
        program,
        Recorder("single", count, feed=feed, reported_replicas=replicated.num_replicas),
    )
    one_steps = single.steps.get(0, [])
    per_step = [_features(workers_k) for workers_k in rep_steps]
    owners = [s.worker for s in rep_steps[0] for _ in s.inputs]
    found = input_findings(per_step, owners)
    notes = replicated.outside
    return compare(
        rep_steps, one_steps, replicated.num_replicas, replicated.strategy_name, found, notes
    )


def _features(workers_k) -> list:
    """The first array input of each replica (global order) at one step."""
    out = []
    for step in workers_k:
        for replica in step.inputs:
            leaves = [
                x
                for x, shared in zip(replica, step.shared, strict=False)
                if x is not None and not shared and x.ndim
            ]
            out.append(leaves[0] if leaves else None)
    return out


def _check_counts(replicas, steps) -> None:
    for name, value in (("replicas", replicas), ("steps", steps)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ValueError(f"{name} must be an int >= 1, got {value!r}.")


def check_step(
    step_fn: Callable,
    model_fn: Callable,
    dataset_fn: Callable,
    strategy: str = "mirrored",
    replicas: int = 4,
    steps: int = 2,
    global_batch_size: int = 16,
    workers: int = 2,
) -> StepCheckReport:
    """Run ``step_fn`` on ``replicas`` replicas and on one; compare and diagnose.

    Args:
        step_fn: the replica function, ``step_fn(objects, inputs) -> loss``; it computes the
            loss, its gradients and calls ``optimizer.apply_gradients`` (run by
            ``strategy.run``; a ``tf.function`` under TPUStrategy).
        model_fn: ``model_fn() -> objects`` (model, optimizer, metrics...), called under the
            strategy's scope.
        dataset_fn: ``dataset_fn(global_batch_size) -> tf.data.Dataset`` of global batches.
        strategy: ``"mirrored"``, ``"multi_worker"`` (a virtual cluster of ``workers``
            workers, ``replicas // workers`` GPUs each) or ``"tpu"``.
        replicas: N, the replicas of the replicated run.
        steps: training steps to compare.
        global_batch_size: B, passed to ``dataset_fn``.

    Returns:
        A :class:`~simdist.sim.check_step_report.StepCheckReport`.

    Raises:
        ValueError: an unknown strategy, counts below 1, replicas that ``workers`` does not
            divide, or a program with no training step.
    """
    _check_counts(replicas, steps)
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}.")
    if strategy == "multi_worker" and replicas % workers:
        raise ValueError(f"{replicas} replicas cannot be split over {workers} workers evenly.")
    if strategy == "tpu" and replicas not in _TPU_TYPES:
        raise ValueError(f"TPU replicas must be one of {sorted(_TPU_TYPES)}, got {replicas}.")
    import simdist as tf

    def train() -> None:
        if strategy == "tpu":
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=_TPU_TYPES[replicas])
            tf.config.experimental_connect_to_cluster(resolver)
            tf.tpu.experimental.initialize_tpu_system(resolver)
            strat = tf.distribute.TPUStrategy(resolver)
        elif strategy == "multi_worker":
            strat = tf.distribute.MultiWorkerMirroredStrategy()
        else:
            strat = tf.distribute.MirroredStrategy()
        with strat.scope():
            objects = model_fn()
        dist = strat.experimental_distribute_dataset(dataset_fn(global_batch_size))

        def replica_step(inputs):
            return step_fn(objects, inputs)

        fn = tf.function(replica_step) if strategy == "tpu" else replica_step
        for inputs in dist:
            strat.run(fn, args=(inputs,))

    def program() -> None:
        if strategy == "multi_worker":
            tf.sim.launch(train, workers=workers, devices_per_worker=replicas // workers)
        else:
            tf.config.set_virtual_devices(gpus=replicas)
            train()

    return _compare_runs(program, steps, replicas if strategy == "mirrored" else None)


def check_script(
    path: str,
    argv: Sequence[str] = (),
    replicas: int | None = None,
    steps: int = 2,
    strategy: str = "auto",
    workers: int = 2,
) -> StepCheckReport:
    """Run the script ``path`` (as ``__main__``, with ``argv``) on N replicas and on one.

    Args:
        replicas: the virtual GPUs of the replicated run (None: what the script asks for).
        steps: the ``strategy.run`` calls to compare (the program stops after them).
        strategy: ``"auto"``: run the script as it is (its own strategy; its own
            ``simdist.sim.launch`` for a virtual cluster); ``"multi_worker"``: run it on every
            worker of a virtual cluster of ``workers`` workers (a script written to run per
            worker under TF_CONFIG), ``replicas // workers`` GPUs each.

    Raises:
        FileNotFoundError: no such script. ValueError: bad counts, or no training step.
    """
    _check_counts(replicas, steps)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such script: {path!r}")
    if strategy not in ("auto", "multi_worker"):
        raise ValueError(f"unknown strategy {strategy!r}; use 'auto' or 'multi_worker'.")
    if strategy == "multi_worker" and replicas is not None and replicas % workers:
        raise ValueError(f"{replicas} replicas cannot be split over {workers} workers evenly.")

    def program() -> None:
        saved_argv, saved_path = sys.argv, list(sys.path)
        sys.argv = [path, *argv]
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        try:
            if strategy == "multi_worker":
                from simdist.sim.launch import launch

                per = None if replicas is None else replicas // workers
                launch(runpy.run_path, workers, per, args=(path,), kwargs={"run_name": "__main__"})
            else:
                if replicas is not None:
                    from simdist.distribute.virtual_devices import set_virtual_devices

                    set_virtual_devices(gpus=replicas)
                runpy.run_path(path, run_name="__main__")
        finally:
            sys.argv, sys.path[:] = saved_argv, saved_path

    return _compare_runs(program, steps, replicas if strategy == "auto" else None)
