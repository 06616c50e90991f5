"""MultiWorkerMirroredStrategy on virtual clusters: semantics against the reference,
equivalence with MirroredStrategy, determinism, divergence, faults and recovery."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist.backends.base import WorkerFailedError
from simdist.distribute import multi_worker_util
from simdist.distribute.runner import CollectiveMismatchError
from simdist.sim import FaultPlan, launch

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")


def _replica_id():
    ctx = tf.distribute.get_replica_context()
    return tf.cast(ctx.replica_id_in_sync_group, tf.float32)


@pytest.mark.parametrize("workers,local", [(1, 1), (1, 3), (2, 1), (2, 2), (3, 2), (4, 1)])
def test_replica_ids_local_results_and_counts(workers, local):
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        ids = strategy.run(_replica_id)
        local_ids = [float(v) for v in strategy.experimental_local_results(ids)]
        return strategy.num_replicas_in_sync, local_ids, strategy.extended.worker_devices

    results = launch(prog, workers=workers, devices_per_worker=local)
    for w, (n, ids, devices) in enumerate(results):
        assert n == workers * local
        assert ids == [float(w * local + i) for i in range(max(local, 1))]
        if workers > 1:
            assert all(f"/task:{w}/" in d for d in devices)


@settings(max_examples=15, deadline=None)
@given(
    workers=st.integers(1, 3),
    local=st.integers(1, 2),
    op=st.sampled_from(["SUM", "MEAN"]),
    seed=st.integers(0, 2**16),
    rows=st.integers(0, 3),
)
def test_reduce_all_reduce_gather_match_the_reference(workers, local, op, seed, rows):
    n = workers * local
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal((rows + 1, 2)).astype(np.float32) for _ in range(n)]
    parts = [rng.standard_normal((r % 3, 2)).astype(np.float32) for r in range(n)]

    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        ctx_value = strategy.experimental_distribute_values_from_function(
            lambda ctx: values[ctx.replica_id_in_sync_group]
        )
        ragged = strategy.experimental_distribute_values_from_function(
            lambda ctx: parts[ctx.replica_id_in_sync_group]
        )

        def step(v):
            ctx = tf.distribute.get_replica_context()
            return ctx.all_reduce(op, v), ctx.all_gather(v, axis=0)

        all_reduced, all_gathered = strategy.run(step, args=(ctx_value,))
        return (
            strategy.reduce(op, ctx_value, axis=None).numpy(),
            strategy.reduce(op, ragged, axis=0).numpy(),
            strategy.gather(ragged, axis=0).numpy(),
            [t.numpy() for t in strategy.experimental_local_results(all_reduced)],
            [t.numpy() for t in strategy.experimental_local_results(all_gathered)],
        )

    for reduced, along, gathered, ar, ag in launch(prog, workers=workers, devices_per_worker=local):
        np.testing.assert_allclose(reduced, ref.reduce(op, values), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(along, ref.reduce(op, parts, axis=0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(gathered, ref.gather(parts, axis=0))
        for a in ar:
            np.testing.assert_array_equal(a, reduced)  # every replica holds the same bits
        for g in ag:
            np.testing.assert_array_equal(g, ref.gather(values, axis=0))


def _train(steps: int, seed: int = 0, strategy_factory=None, batch=4, ckpt_dir=None):
    """The guide's Dense model trained on per-pipeline data; returns the final weights."""
    tf.random.set_seed(seed)
    strategy = (strategy_factory or tf.distribute.MultiWorkerMirroredStrategy)()
    n = strategy.num_replicas_in_sync
    data_rng = np.random.default_rng(seed)
    x = data_rng.random((steps * batch * n, 5)).astype(np.float32)
    y = data_rng.integers(2, size=(steps * batch * n, 1))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(5,))])
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)

    def dataset_fn(ctx):
        # Global step s holds rows [s*B*n, (s+1)*B*n); replica r reads its slice of each.
        replicas = ctx.num_replicas_in_sync // ctx.num_input_pipelines
        first = ctx.input_pipeline_id * replicas * batch
        idx = np.concatenate(
            [
                np.arange(s * batch * n + first, s * batch * n + first + replicas * batch)
                for s in range(steps)
            ]
        )
        return tf.data.Dataset.from_tensor_slices((x[idx], y[idx])).batch(batch)

    dataset = strategy.distribute_datasets_from_function(dataset_fn)

    @tf.function
    def step_fn(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            per_example = tf.keras.losses.sparse_categorical_crossentropy(
                labels, logits, from_logits=True
            )
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=batch * n)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    for inputs in dataset:
        strategy.run(step_fn, args=(inputs,))
    return model.get_weights()


@pytest.mark.parametrize("workers,local", [(2, 2), (4, 1), (1, 4)])
def test_training_matches_mirrored_strategy_on_the_same_global_batches(workers, local):
    tf.config.set_virtual_devices(gpus=4)
    expected = _train(6, strategy_factory=tf.distribute.MirroredStrategy)
    for weights in launch(_train, workers=workers, devices_per_worker=local, args=(6,)):
        for got, want in zip(weights, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("implementation", ["AUTO", "RING", "NCCL"])
def test_runs_are_bit_identical_and_workers_agree(implementation):
    def prog():
        options = tf.distribute.experimental.CommunicationOptions(implementation=implementation)
        return _train(
            4,
            strategy_factory=lambda: tf.distribute.MultiWorkerMirroredStrategy(
                communication_options=options
            ),
        )

    first = launch(prog, workers=2, devices_per_worker=2)
    second = launch(prog, workers=2, devices_per_worker=2)
    for a, b in zip(first + second, first[:1] * 4, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_algorithm_follows_the_communication_implementation():
    def prog():
        out = {}
        for impl in ("AUTO", "RING", "NCCL"):
            options = tf.distribute.experimental.CommunicationOptions(implementation=impl)
            s = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
            out[impl] = s.extended._cross_device_ops_impl.algorithm(1 << 20)[0]
        return out

    assert launch(prog, workers=2, devices_per_worker=2)[0] == {
        "AUTO": "hierarchical",
        "RING": "ring",
        "NCCL": "hierarchical",
    }
    assert launch(prog, workers=2, devices_per_worker=1)[0]["NCCL"] == "ring"


def test_variables_start_from_worker_zero_values():
    def prog():
        tf.random.set_seed(100 + tf.distribute.cluster_resolver.TFConfigClusterResolver().task_id)
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            v = tf.Variable(tf.random.uniform([3]))
        return v.numpy()

    a, b = launch(prog, workers=2, devices_per_worker=1)
    np.testing.assert_array_equal(a, b)


def test_sync_on_read_metric_reads_every_worker():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            metric = tf.keras.metrics.Sum()
        strategy.run(lambda: metric.update_state(_replica_id() + 1.0))
        return float(metric.result())

    assert launch(prog, workers=3, devices_per_worker=2) == [21.0] * 3


def test_keras_fit_on_a_distributed_dataset_as_the_api_page_shows():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(5,))])

        def dataset_fn(ctx):
            rng = np.random.default_rng(ctx.input_pipeline_id)
            x = rng.random((2, 5)).astype(np.float32)
            y = rng.integers(2, size=(2, 1))
            dataset = tf.data.Dataset.from_tensor_slices((x, y))
            return dataset.repeat().batch(1, drop_remainder=True)

        dist_dataset = strategy.distribute_datasets_from_function(dataset_fn)
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        history = model.fit(dist_dataset, epochs=2, steps_per_epoch=3, verbose=0)
        return history.history["loss"], model.get_weights()

    (loss0, w0), (loss1, w1) = launch(prog, workers=2, devices_per_worker=2)
    assert loss0 == loss1 and len(loss0) == 2
    for a, b in zip(w0, w1, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_worker_making_another_collective_stops_every_worker():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        worker = strategy.extended._worker_index
        ids = strategy.run(lambda: tf.reshape(_replica_id(), [1]))
        if worker == 1:
            strategy.reduce("SUM", ids, axis=None)
        return strategy.gather(ids, axis=0)

    with pytest.raises(CollectiveMismatchError, match=r"worker 1 is in \('all_reduce'"):
        launch(prog, workers=2, devices_per_worker=2)


def test_a_worker_returning_early_is_a_mismatch_not_a_hang():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        if strategy.extended._worker_index == 0:
            return None
        return strategy.reduce("SUM", strategy.run(_replica_id), axis=None)

    with pytest.raises(CollectiveMismatchError, match=r"Worker\(s\) \[0\] returned"):
        launch(prog, workers=2, devices_per_worker=1, timeout=20)


def test_a_raising_worker_is_named_and_stops_the_others():
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        if strategy.extended._worker_index == 2:
            raise ValueError("bad batch on this worker")
        return strategy.reduce("SUM", strategy.run(_replica_id), axis=None)

    with pytest.raises(ValueError, match="bad batch") as info:
        launch(prog, workers=3, devices_per_worker=1)
    assert info.value.worker_id == 2
    assert "raised on worker 2 of 3" in "".join(getattr(info.value, "__notes__", []))


def test_a_killed_worker_stops_the_cluster_with_its_name():
    plan = FaultPlan().kill_worker(1, step=3)
    with pytest.raises(WorkerFailedError, match=r"Worker 1 \(worker:1\) of 2 died at its step 3"):
        launch(_train, workers=2, devices_per_worker=1, args=(6,), faults=plan)


def test_fault_plan_names_a_worker_the_cluster_lacks():
    with pytest.raises(ValueError, match=r"worker\(s\) \[5\]"):
        launch(_train, workers=2, args=(1,), faults=FaultPlan().kill_worker(5, 1))


def _train_with_checkpoints(directory, epochs=3, steps=4, seed=0):
    """Per-epoch checkpoints on every worker (the chief's path canonical); resumes."""
    tf.random.set_seed(seed)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    n = strategy.num_replicas_in_sync
    rng = np.random.default_rng(seed)
    x = rng.random((steps * 2 * n, 5)).astype(np.float32)
    y = rng.integers(2, size=(steps * 2 * n, 1))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(5,))])
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
        epoch = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, epoch=epoch)
    path = multi_worker_util.write_filepath(directory, strategy)
    manager = tf.train.CheckpointManager(checkpoint, path, max_to_keep=2)
    manager.restore_or_initialize()
    dataset = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x, y)).batch(2 * n)
    )

    @tf.function
    def step_fn(inputs):
        features, labels = inputs
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            per_example = tf.keras.losses.sparse_categorical_crossentropy(
                labels, logits, from_logits=True
            )
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=2 * n)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))

    while int(epoch.numpy()) < epochs:
        for inputs in dataset:
            strategy.run(step_fn, args=(inputs,))
        epoch.assign_add(1)
        manager.save()
    return model.get_weights()


def test_restart_after_a_kill_ends_bit_identical_to_an_uninterrupted_run(tmp_path):
    reference_run = launch(
        _train_with_checkpoints, workers=2, devices_per_worker=2, args=(str(tmp_path / "a"),)
    )
    crashed = str(tmp_path / "b")
    with pytest.raises(WorkerFailedError, match="Worker 0"):
        launch(
            _train_with_checkpoints,
            workers=2,
            devices_per_worker=2,
            args=(crashed,),
            faults=FaultPlan().kill_worker(0, step=7),
        )
    assert tf.train.latest_checkpoint(crashed).endswith("ckpt-1")
    assert os.path.isdir(os.path.join(str(tmp_path), "workertemp_1"))
    resumed = launch(_train_with_checkpoints, workers=2, devices_per_worker=2, args=(crashed,))
    for got, want in zip(resumed[0], reference_run[0], strict=True):
        np.testing.assert_array_equal(got, want)


def test_two_workers_saving_to_one_path_is_detected(tmp_path):
    def prog():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            v = tf.Variable(1.0)
        return tf.train.Checkpoint(v=v).write(str(tmp_path / "ckpt"))

    with pytest.raises(ValueError, match="Workers 0 and 1 both save to"):
        launch(prog, workers=2, devices_per_worker=1)


def test_a_cluster_that_is_not_running_is_refused_with_how_to_start_it():
    config = {"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}}
    with tf.distribute.cluster_resolver.use_tf_config(config):
        with pytest.raises(ValueError, match="simdist.sim.launch.*mpiexec -n 2"):
            tf.distribute.MultiWorkerMirroredStrategy()


def test_a_ps_task_cannot_run_this_strategy():
    config = {
        "cluster": {"worker": ["a:1"], "ps": ["p:1"]},
        "task": {"type": "worker", "index": 0},
    }
    with tf.distribute.cluster_resolver.use_tf_config(config):
        with pytest.raises(ValueError, match="ps"):
            tf.distribute.MultiWorkerMirroredStrategy()


def test_single_worker_without_tf_config_uses_the_local_devices():
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == len(tf.config.list_logical_devices("GPU"))
    assert strategy.extended.worker_devices[0] == "/job:localhost/replica:0/task:0/device:GPU:0"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"bytes_per_pack": -1}, "bytes_per_pack"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"implementation": "MPI"}, "AUTO, RING or NCCL"),
    ],
)
def test_communication_options_reject_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tf.distribute.experimental.CommunicationOptions(**kwargs)


def test_bytes_per_pack_splits_the_gradients_into_several_collectives():
    def prog(limit):
        options = tf.distribute.experimental.CommunicationOptions(bytes_per_pack=limit)
        strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
        values = [strategy.run(lambda k=k: tf.fill([k + 1], _replica_id())) for k in range(3)]
        calls = []
        cdo = strategy.extended._cross_device_ops_impl
        original = cdo.all_reduce_flat
        cdo.all_reduce_flat = lambda flats, op="sum": (
            calls.append(len(flats[0])) or original(flats, op)
        )
        out = strategy.extended.batch_reduce_to("SUM", [(v, None) for v in values])
        return calls, [o.numpy().tolist() for o in out]

    calls, out = launch(prog, workers=2, devices_per_worker=1, args=(0,))[0]
    assert calls == [6] and out == [[1.0], [1.0, 1.0], [1.0, 1.0, 1.0]]
    calls, out = launch(prog, workers=2, devices_per_worker=1, args=(12,))[0]
    assert calls == [3, 3] and out == [[1.0], [1.0, 1.0], [1.0, 1.0, 1.0]]


def test_a_list_all_reduce_in_replica_context_is_packed_by_its_options():
    """As TF: ReplicaContext.all_reduce(list, options) goes through batch_reduce_to, so
    its bytes_per_pack (or the strategy's) decides how many cross-worker collectives."""

    def prog(limit):
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        cdo = strategy.extended._cross_device_ops_impl
        calls = []
        original = cdo.all_reduce_flat
        cdo.all_reduce_flat = lambda flats, op="sum": (
            calls.append(len(flats[0])) or original(flats, op)
        )
        options = tf.distribute.experimental.CommunicationOptions(bytes_per_pack=limit)

        def fn():
            ctx = tf.distribute.get_replica_context()
            values = [tf.fill([k + 1], _replica_id()) for k in range(3)]
            return ctx.all_reduce("SUM", values, options=options)

        out = strategy.experimental_local_results(strategy.run(fn))[0]
        return calls, [o.numpy().tolist() for o in out]

    calls, out = launch(prog, workers=2, devices_per_worker=1, args=(0,))[0]
    assert calls == [6] and out == [[1.0], [1.0, 1.0], [1.0, 1.0, 1.0]]
    calls, out = launch(prog, workers=2, devices_per_worker=1, args=(12,))[0]
    assert calls == [3, 3] and out == [[1.0], [1.0, 1.0], [1.0, 1.0, 1.0]]


def test_experimental_names_and_the_communication_argument():
    from simdist.distribute.collective_all_reduce_strategy import (
        _ExperimentalMultiWorkerMirroredStrategy,
    )

    exp = tf.distribute.experimental
    assert exp.MultiWorkerMirroredStrategy is _ExperimentalMultiWorkerMirroredStrategy
    assert exp.CollectiveCommunication is exp.CommunicationImplementation
    strategy = exp.MultiWorkerMirroredStrategy(exp.CollectiveCommunication.RING)
    assert strategy.extended._cross_device_ops_impl.algorithm(1 << 20) == ("ring", {})


def _fit_with_callbacks(backup_dir, checkpoint_path, epochs=3):
    tf.random.set_seed(0)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rng = np.random.default_rng(0)
    x = rng.random((48, 5)).astype(np.float32)
    y = rng.integers(2, size=(48, 1))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(5,))])
    model.compile(
        optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    callbacks = [
        tf.keras.callbacks.BackupAndRestore(backup_dir, save_freq=2),
        tf.keras.callbacks.ModelCheckpoint(checkpoint_path, save_weights_only=True),
    ]
    model.fit(x, y, batch_size=8, epochs=epochs, callbacks=callbacks, verbose=0, shuffle=False)
    return model.get_weights()


def test_keras_callbacks_on_every_worker_resume_bit_identical(tmp_path):
    ckpt = str(tmp_path / "weights.{epoch:02d}")
    want = launch(
        _fit_with_callbacks,
        workers=2,
        devices_per_worker=2,
        args=(str(tmp_path / "backup_a"), ckpt),
    )
    names = sorted(p.name for p in tmp_path.iterdir() if p.name != "backup_a")
    assert [re.sub(r"\.data-[0-9a-f]{16}\.npz$", ".data", n) for n in names] == [
        "checkpoint",  # the directory's state file, as Keras's save_weights writes it
        "weights.01.data",
        "weights.01.index",
        "weights.02.data",
        "weights.02.index",
        "weights.03.data",
        "weights.03.index",
    ]  # the chief's copies only: the other worker's temporary copies are gone
    backup = str(tmp_path / "backup_b")
    with pytest.raises(WorkerFailedError, match="Worker 1"):
        launch(
            _fit_with_callbacks,
            workers=2,
            devices_per_worker=2,
            args=(backup, ckpt),
            faults=FaultPlan().kill_worker(1, step=9),
        )  # epoch 2, step 3
    got = launch(_fit_with_callbacks, workers=2, devices_per_worker=2, args=(backup, ckpt))
    for a, b in zip(got[0] + got[1], want[0] + want[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_strategy_must_come_before_other_api_calls(caplog):
    def late():
        tf.constant(1.0)  # starts the eager runtime, as in TF
        tf.distribute.MultiWorkerMirroredStrategy()

    def early_then_again():
        tf.distribute.MultiWorkerMirroredStrategy()
        tf.constant(1.0)
        return tf.distribute.MultiWorkerMirroredStrategy().num_replicas_in_sync  # fine

    with pytest.raises(RuntimeError, match="Collective ops must be configured at program startup"):
        launch(late, workers=2, devices_per_worker=1)
    assert launch(early_then_again, workers=2, devices_per_worker=1) == [2, 2]
    with caplog.at_level("WARNING", logger="simdist"):
        launch(late, workers=1, devices_per_worker=1)  # one worker: TF only warns
    assert "Collective ops is not configured at program startup" in caplog.text
