"""simdist.sim.check_step: correct steps are N-vs-1 equivalent; each planted mistake is the
top-ranked diagnosis, named correctly and not confused with another."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist.sim.check_step import check_step

FEATURES = 3


def dataset_fn_for(examples: int, policy=None):
    def dataset_fn(global_batch_size):
        rng = np.random.default_rng(7)
        x = rng.standard_normal((examples, FEATURES)).astype(np.float32)
        y = rng.integers(2, size=(examples,))
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch_size)
        if policy is not None:
            options = tf.data.Options()
            options.experimental_distribute.auto_shard_policy = policy
            dataset = dataset.with_options(options)
        return dataset

    return dataset_fn


def model_fn_for(batch_norm=False, regularized=False):
    def model_fn():
        reg = tf.keras.regularizers.l2(0.5) if regularized else None
        layers = [
            tf.keras.layers.Dense(
                4, activation="relu", kernel_regularizer=reg, input_shape=(FEATURES,)
            )
        ]
        if batch_norm:
            layers.append(tf.keras.layers.BatchNormalization())
        layers.append(tf.keras.layers.Dense(2))
        model = tf.keras.Sequential(layers)
        metric = tf.keras.metrics.Mean("train_loss")
        return model, tf.keras.optimizers.SGD(0.1), metric

    return model_fn


def make_step(cause: str | None, global_batch: int):
    """A correct replica step, or one with ``cause`` planted."""

    def step(objects, inputs):
        model, optimizer, metric = objects
        x, y = inputs
        ctx = tf.distribute.get_replica_context()
        if cause == "random_per_replica":
            seed = [1, int(ctx.replica_id_in_sync_group)]
            x = x + tf.random.stateless_normal(tf.shape(x), seed=seed)
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            per_example = tf.keras.losses.sparse_categorical_crossentropy(
                y, logits, from_logits=True
            )
            if cause == "loss_scaling":
                loss = tf.reduce_mean(per_example)
            elif cause == "average_loss_batch":
                loss = tf.nn.compute_average_loss(per_example)
            else:
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
            if cause == "regularization":
                loss = loss + tf.add_n(model.losses)
            elif model.losses:
                loss = loss + tf.nn.scale_regularization_loss(tf.add_n(model.losses))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        if cause == "metric_one_replica":
            if int(ctx.replica_id_in_sync_group) == 0:
                metric.update_state(loss * ctx.num_replicas_in_sync)
        else:
            metric.update_state(loss * ctx.num_replicas_in_sync)
        return loss

    return step


def run_check(cause, replicas, per_replica, strategy="mirrored"):
    batch = replicas * per_replica
    if cause == "average_loss_batch":
        batch += 1  # a global batch the replicas split unevenly
    policy = tf.data.experimental.AutoShardPolicy.OFF if cause == "dataset_not_sharded" else None
    return check_step(
        make_step(cause, batch),
        model_fn_for(batch_norm=cause == "batch_norm", regularized=cause == "regularization"),
        dataset_fn_for(batch * 3, policy),
        strategy="multi_worker" if cause == "dataset_not_sharded" else strategy,
        replicas=replicas,
        steps=2,
        global_batch_size=batch,
    )


CAUSES = [
    "loss_scaling",
    "average_loss_batch",
    "metric_one_replica",
    "batch_norm",
    "regularization",
    "random_per_replica",
    "dataset_not_sharded",
]


@settings(max_examples=6, deadline=None)
@given(replicas=st.sampled_from([2, 4]), per_replica=st.integers(2, 4))
def test_correct_step_is_equivalent(replicas, per_replica):
    report = run_check(None, replicas, per_replica)
    assert report.equivalent, str(report)
    assert report.max_rel <= report.tolerance
    assert "N-vs-1 equivalent within float rounding (max relative difference" in str(report)


@pytest.mark.parametrize("cause", CAUSES)
@settings(max_examples=3, deadline=None)
@given(replicas=st.sampled_from([2, 4]), per_replica=st.integers(2, 4))
def test_planted_cause_is_the_top_diagnosis(cause, replicas, per_replica):
    report = run_check(cause, replicas, per_replica)
    assert not report.equivalent
    assert report.cause == cause, str(report)
    assert "likely cause 1: " + report.diagnoses[0].title in str(report)


def test_loss_scaling_names_the_factor_and_the_line():
    report = run_check("loss_scaling", 4, 2)
    first = [v for v in report.variables if v.step == 0]
    assert all(abs(v.factor - 4) < 1e-3 and v.uniform for v in first)
    assert "x4 the one-replica gradient" in str(report)
    assert report.diagnoses[0].code == "loss = tf.reduce_mean(per_example)"
    assert report.diagnoses[0].site.endswith(f"test_check_step.py:{_line('reduce_mean(per')}")


def test_average_loss_batch_points_at_compute_average_loss():
    d = run_check("average_loss_batch", 4, 2).diagnoses[0]
    assert d.code == "loss = tf.nn.compute_average_loss(per_example)"


def test_batch_norm_says_it_only_differs_with_different_statistics():
    assert "only differs when the replicas' batch statistics differ" in str(
        run_check("batch_norm", 2, 3)
    )


@pytest.mark.parametrize("strategy", ["multi_worker", "tpu"])
def test_other_strategies(strategy):
    assert run_check(None, 4, 2, strategy).equivalent
    assert run_check("loss_scaling", 4, 2, strategy).cause == "loss_scaling"


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown strategy"):
        check_step(None, None, None, strategy="horovod")
    with pytest.raises(ValueError, match="replicas must be an int"):
        check_step(None, None, None, replicas=0)


def _line(text: str) -> int:
    with open(__file__, encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, start=1) if text in line)


def test_different_initial_weights_are_said_first():
    def model_fn():
        model, optimizer, metric = model_fn_for()()
        noise = np.random.default_rng().standard_normal((FEATURES, 4)).astype(np.float32)
        model.layers[0].kernel.assign(noise)  # NumPy's own unseeded generator
        return model, optimizer, metric

    report = check_step(
        make_step(None, 8), model_fn, dataset_fn_for(24), replicas=2, global_batch_size=8
    )
    assert report.cause == "initial_weights", str(report)
