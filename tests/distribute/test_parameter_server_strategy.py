"""ParameterServerStrategy: cluster validation, placement, sharding, training, refusals, cost."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import simdist as tf
from simdist import errors
from simdist.cost.parameter_server import price_ps_step
from simdist.distribute.cluster_resolver import (
    ClusterSpec,
    SimpleClusterResolver,
    TFConfigClusterResolver,
)
from simdist.distribute.coordinator import ClusterCoordinator
from simdist.distribute.parameter_server_strategy import ParameterServerStrategy
from simdist.distribute.partitioners import FixedShardsPartitioner, MinSizePartitioner
from simdist.distribute.sharded_variable import ShardedVariable


def resolver(workers=2, ps=2):
    jobs = {"worker": [f"w{i}:1" for i in range(workers)], "ps": [f"p{i}:1" for i in range(ps)]}
    return SimpleClusterResolver(ClusterSpec({k: v for k, v in jobs.items() if v}))


def test_from_tf_config(monkeypatch):
    config = {
        "cluster": {"chief": ["c:2222"], "worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]},
        "task": {"type": "chief", "index": 0},
    }
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    strategy = ParameterServerStrategy(TFConfigClusterResolver())
    assert (strategy._num_workers, strategy._num_ps) == (2, 1)
    assert strategy.num_replicas_in_sync == 1
    assert strategy.extended.parameter_devices == ("/job:ps/replica:0/task:0/device:CPU:0",)
    del config["cluster"]["ps"]
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    with pytest.raises(ValueError, match='has no "ps" job'):
        ParameterServerStrategy(TFConfigClusterResolver())


@pytest.mark.parametrize(
    ("workers", "ps", "message"),
    [(2, 0, "at least one ps"), (0, 1, "at least one worker"), (0, 0, "must be non-empty")],
)
def test_cluster_rules(workers, ps, message):
    with pytest.raises(ValueError, match=message):
        ParameterServerStrategy(resolver(workers, ps))
    with pytest.raises(TypeError, match="ClusterResolver"):
        ParameterServerStrategy("w0:1")


def test_round_robin_placement_counts_every_variable():
    strategy = ParameterServerStrategy(resolver(ps=2))
    with strategy.scope():
        a, b, c = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    ps = "/job:ps/replica:0/task:{}/device:CPU:0"
    assert [v.device for v in (a, b, c)] == [ps.format(0), ps.format(1), ps.format(0)]
    assert repr(a) == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=1.0>"


def test_partitioner_makes_sharded_variables():
    strategy = ParameterServerStrategy(
        resolver(ps=2), variable_partitioner=FixedShardsPartitioner(3)
    )
    with strategy.scope():
        emb = tf.Variable(np.arange(14, dtype=np.float32).reshape(7, 2), name="emb")
        scalar = tf.Variable(1.0, name="s")
        row = tf.Variable([[1.0, 2.0]], name="row")  # one row: min(3, 1) = 1 shard
    assert isinstance(emb, ShardedVariable) and not isinstance(scalar, ShardedVariable)
    assert not isinstance(row, ShardedVariable)
    assert [v.name for v in emb.variables] == ["emb/part_0:0", "emb/part_1:0", "emb/part_2:0"]
    assert [v.shape[0] for v in emb.variables] == [3, 2, 2]
    assert [v.device[-14:-13] for v in emb.variables] + [scalar.device[-14:-13]] == list("0101")
    np.testing.assert_array_equal(emb.numpy(), np.arange(14).reshape(7, 2))


def test_bad_partitioner_result():
    strategy = ParameterServerStrategy(resolver(), variable_partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match="elements are 1 besides the first"), strategy.scope():
        tf.Variable(np.zeros((4, 4), np.float32))


def _train(partitioner, ps, optimizer="adam", steps=6):
    tf.random.set_seed(7)
    strategy = ParameterServerStrategy(resolver(workers=2, ps=ps), variable_partitioner=partitioner)
    coordinator = ClusterCoordinator(strategy, simdist_seed=3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 5)).astype(np.float32)
    y = (x @ rng.normal(size=(5, 2))).astype(np.float32)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(8, activation="relu", input_shape=(5,)),
                tf.keras.layers.Dense(2),
            ]
        )
        opt = (
            tf.keras.optimizers.Adam(0.01) if optimizer == "adam" else tf.keras.optimizers.SGD(0.1)
        )
    it = iter(
        coordinator.create_per_worker_dataset(
            lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16)
        )
    )

    @tf.function
    def step(iterator):
        def replica_fn(bx, by):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(bx, training=True) - by))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return loss

        return strategy.run(replica_fn, args=next(iterator))

    losses = [coordinator.schedule(step, args=(it,)) for _ in range(steps)]
    coordinator.join()
    return model, opt, [float(r.fetch()) for r in losses]


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_sharded_model_equals_unsharded_twin(optimizer):
    plain, opt_a, loss_a = _train(None, ps=1, optimizer=optimizer)
    sharded, opt_b, loss_b = _train(MinSizePartitioner(16, max_shards=3), ps=3, optimizer=optimizer)
    assert any(isinstance(w, ShardedVariable) for w in sharded.weights)
    assert loss_a == loss_b
    for a, b in zip(plain.weights, sharded.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert int(opt_a.iterations.numpy()) == int(opt_b.iterations.numpy()) == 6


def test_checkpoint_restores_without_a_strategy_and_across_shardings(tmp_path):
    model, opt, _ = _train(FixedShardsPartitioner(2), ps=2)
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "ps"))
    twin = tf.keras.Sequential(
        [tf.keras.layers.Dense(8, activation="relu", input_shape=(5,)), tf.keras.layers.Dense(2)]
    )
    tf.train.Checkpoint(model=twin).restore(path).assert_existing_objects_matched()
    for a, b in zip(model.weights, twin.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_run_outside_schedule_warns_and_runs_on_the_coordinator(caplog):
    strategy = ParameterServerStrategy(resolver())
    with caplog.at_level(logging.WARNING, logger="simdist"):
        out = strategy.run(lambda: tf.constant(3))
    assert int(out) == 3 and "without using `ClusterCoordinator.schedule`" in caplog.text


def _ps_model(strategy):
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(5,))])
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.5),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
    return model


def _ps_dataset():
    rng = np.random.default_rng(0)
    x = rng.random((64, 5)).astype(np.float32)
    y = (x.sum(1) > 2.5).astype(np.int64)
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(64, seed=1).repeat().batch(8)


def _fit_history():
    tf.random.set_seed(0)
    model = _ps_model(ParameterServerStrategy(resolver()))
    history = model.fit(_ps_dataset(), epochs=4, steps_per_epoch=8, verbose=0)
    return history.history, model.get_weights()


def test_keras_fit_schedules_steps_on_the_workers_and_learns():
    history, weights = _fit_history()
    losses = history["loss"]
    assert len(losses) == 4 and losses[-1] < losses[0]
    assert set(history) == {"loss", "accuracy"}
    again, weights_again = _fit_history()  # same seed: same interleaving, same bits
    assert again == history
    for a, b in zip(weights, weights_again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_keras_fit_rules_under_parameter_server_strategy():
    strategy = ParameterServerStrategy(resolver())
    model = _ps_model(strategy)
    with pytest.raises(ValueError, match="steps_per_epoch` must be specified"):
        model.fit(_ps_dataset(), epochs=1)
    with pytest.raises(ValueError, match="NumPy arrays"):
        model.fit(np.zeros((8, 5), np.float32), np.zeros((8,), np.int64), steps_per_epoch=1)
    with pytest.raises(errors.UnimplementedError, match="Model.fit does"):
        model.evaluate(_ps_dataset().take(2))


def test_more_ps_tasks_lower_the_predicted_step_time():
    sizes = [64 << 20] * 8  # eight 64 MiB variables
    times = [price_ps_step(sizes, num_workers=8, num_ps=p).time for p in (1, 2, 4)]
    assert times[0] > times[1] > times[2]
    one = price_ps_step(sizes, num_workers=8, num_ps=1)
    assert one.bottleneck.src == "dev8" or one.bottleneck.dst == "dev8"  # the ps's own link
    # the ps link carries every worker's pull: 8 workers x 512 MiB over 12.5 GB/s
    assert one.pull.time == pytest.approx(8 * 512 * 2**20 / 12.5e9, rel=1e-3)
    with pytest.raises(ValueError, match="at least one worker"):
        price_ps_step(sizes, 0, 1)
