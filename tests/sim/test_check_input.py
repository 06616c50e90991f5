"""simdist.sim.check_input: same examples on every worker, shuffles that differ per worker,
uneven and empty batches; alone and as part of check-step."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from simdist.sim.check_input import check_input, input_findings


def _dataset(n, batch, policy=None, shuffle_seed=None, drop_remainder=False):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    dataset = tf.data.Dataset.from_tensor_slices((x, np.zeros(n)))
    if shuffle_seed is not None:
        dataset = dataset.shuffle(n, seed=shuffle_seed)
    dataset = dataset.batch(batch, drop_remainder=drop_remainder)
    if policy is not None:
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = policy
        dataset = dataset.with_options(options)
    return dataset


def test_sharded_even_pipeline_is_clean():
    report = check_input(_dataset(16, 8, drop_remainder=True), workers=2, devices_per_worker=2)
    assert report.ok and not report.findings
    assert "every replica got its own examples" in str(report)


def test_auto_shard_off_gives_every_worker_the_same_examples():
    policy = tf.data.experimental.AutoShardPolicy.OFF
    report = check_input(_dataset(16, 8, policy), workers=2, devices_per_worker=2)
    assert not report.ok
    (finding,) = [f for f in report.findings if f.kind == "same_examples"]
    assert finding.step == 0 and "not sharded" in finding.message


def test_uneven_and_empty_final_batches_name_step_and_sizes():
    report = check_input(_dataset(10, 4), workers=1, devices_per_worker=4)
    kinds = {f.kind: f for f in report.findings}
    assert report.ok  # a warning, not a problem
    assert "step 2: replica batch sizes 1, 1, 0, 0" in kinds["empty"].message


def test_shuffle_that_differs_per_worker_is_flagged():
    # worker w's pipeline shuffled with seed w (sharding by position then overlaps)
    steps = []
    orders = [np.random.default_rng(w).permutation(16) for w in range(2)]
    for s in range(2):
        steps.append(
            [orders[w][s * 4 + 2 * r : s * 4 + 2 * r + 2, None] for w in range(2) for r in range(2)]
        )
    found = input_findings(steps, [0, 0, 1, 1])
    assert [f.kind for f in found] == ["shuffle_differs"]
    same = [
        [np.arange(16)[s * 8 + 2 * i : s * 8 + 2 * i + 2, None] for i in range(4)] for s in range(2)
    ]
    assert input_findings(same, [0, 0, 1, 1]) == []  # one order, sharded: nothing shared


def test_shuffle_seeded_per_worker_in_a_real_cluster():
    import json
    import os

    from simdist.sim.check_step import check_step

    def dataset_fn(batch):
        index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
        return _dataset(32, batch, shuffle_seed=index)

    def model_fn():
        return tf.keras.Sequential(
            [tf.keras.layers.Dense(1, input_shape=(2,))]
        ), tf.keras.optimizers.SGD(0.01)

    def step(objects, inputs):
        model, optimizer = objects
        x, _ = inputs
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(tf.reduce_sum(model(x), axis=1), global_batch_size=8)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    report = check_step(
        step, model_fn, dataset_fn, strategy="multi_worker", replicas=4, global_batch_size=8
    )
    assert report.cause == "shuffle_differs", str(report)


def test_bad_counts_and_infinite_dataset():
    with pytest.raises(ValueError, match="workers and devices_per_worker"):
        check_input(_dataset(4, 2), workers=0)
    with pytest.raises(ValueError, match="infinite"):
        check_input(_dataset(4, 2).repeat())
    assert check_input(_dataset(4, 2).repeat(), steps=3).title.endswith("3 steps")
