"""``Model.fit`` under ParameterServerStrategy: steps scheduled on workers by a coordinator.

As TF's Keras does with a ``ClusterCoordinator``: ``steps_per_epoch`` is required (workers
pull from their own copy of an infinite dataset, so an epoch has no natural end); each step
is a ``tf.function`` scheduled with ``coordinator.schedule`` on the worker's iterator, and
the epoch ends with ``coordinator.join()``. Batch callbacks run as steps are scheduled (their
results are not known yet, as in TF, so the batch logs are those of the last finished
epoch); the epoch's loss is the mean over every step's examples once all have finished.
Worker failures re-run a step on another worker (the coordinator's rule), so every
scheduled step counts exactly once.
"""

from __future__ import annotations

from simdist import errors
from simdist.core.function import function
from simdist.data.dataset import Dataset
from simdist.keras.engine.callback_base import CallbackList

__all__ = ["fit_with_coordinator"]


def fit_with_coordinator(
    model, x, y, epochs, steps_per_epoch, callbacks, verbose, initial_epoch, validation_data
):
    """The body of ``fit`` for a strategy that is used with a ``ClusterCoordinator``.

    Raises:
        ValueError: no ``steps_per_epoch``, ``y`` given, or input that is not a Dataset (or a
            function returning one).
        UnimplementedError: ``validation_data`` (not supported with this strategy here).
    """
    from simdist.distribute.coordinator import ClusterCoordinator
    from simdist.distribute.input_context import InputContext
    from simdist.keras.engine.train_step import _logs, _run_step, reset_metrics
    from simdist.keras.utils.dataset_creator import DatasetCreator

    strategy = model.distribute_strategy
    if steps_per_epoch is None:
        raise ValueError(
            "`steps_per_epoch` must be specified when using ParameterServerStrategy: every "
            "worker reads its own copy of the (repeated) dataset, so an epoch has no end of "
            "data; pass model.fit(..., steps_per_epoch=N)."
        )
    if y is not None or not (isinstance(x, Dataset) or callable(x)):
        raise ValueError(
            "With ParameterServerStrategy, Model.fit takes a tf.data.Dataset of (x, y) pairs "
            "(or a function returning one), batched and repeated; NumPy arrays and `y` are "
            "not supported, as in TF."
        )
    if validation_data is not None:
        raise errors.UnimplementedError(
            "validation_data with ParameterServerStrategy is not supported in simdist; "
            "evaluate with model.evaluate on a model restored without the strategy."
        )
    coordinator = strategy._cluster_coordinator or ClusterCoordinator(strategy)
    if isinstance(x, DatasetCreator):  # as TF: one input pipeline per worker, id 0 of 1
        creator = x
        context = InputContext(
            num_input_pipelines=1,
            input_pipeline_id=0,
            num_replicas_in_sync=strategy.num_replicas_in_sync,
        )
        x = lambda: creator(context)  # noqa: E731 - the coordinator calls it once per worker
    iterator = iter(coordinator.create_per_worker_dataset(x))

    @function
    def train_function(iterator):
        loss, size = _run_step(model, next(iterator), training=True)
        return loss * size, size

    cbs = CallbackList(
        callbacks,
        add_history=True,
        add_progbar=verbose != 0,
        model=model,
        verbose=verbose,
        epochs=epochs,
        steps=steps_per_epoch,
    )
    object.__setattr__(model, "stop_training", False)
    cbs.on_train_begin()
    logs: dict = {}
    for epoch in range(initial_epoch, epochs):
        reset_metrics(model)
        cbs.on_epoch_begin(epoch)
        results = []
        for step in range(steps_per_epoch):
            cbs.on_train_batch_begin(step)
            results.append(coordinator.schedule(train_function, args=(iterator,)))
            cbs.on_train_batch_end(step, dict(logs))
            if model.stop_training:
                break
        coordinator.join()
        fetched = [r.fetch() for r in results]
        total = sum(float(a) for a, _ in fetched)
        count = sum(float(b) for _, b in fetched)
        logs = _logs(model, [total, count])
        cbs.on_epoch_end(epoch, logs)
        if model.stop_training:
            break
    cbs.on_train_end(logs)
    return model.history
