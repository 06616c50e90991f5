"""``tf.keras.utils.experimental.DatasetCreator`` in ``Model.fit``: against tf_keras 2.21
(same weights, 2 replicas; the loss history and the weights) and its errors."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import simdist as tf
from tests.keras import tf_differential as tf_oracle

PROGRAM = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        x = np.linspace(-1, 1, 64, dtype="float32").reshape(32, 2)
        y = x @ np.array([[2.0], [-1.0]], "float32") + 0.5
        seen = []

        def dataset_fn(ctx):
            seen.append([ctx.num_input_pipelines, ctx.input_pipeline_id,
                         ctx.get_per_replica_batch_size(8)])
            ds = tf.data.Dataset.from_tensor_slices((x, y)).repeat()
            return ds.batch(ctx.get_per_replica_batch_size(8))

        strategy = tf.distribute.MirroredStrategy(devices)
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.build((None, 2))
            if weights is not None:
                model.set_weights(weights)
            start = model.get_weights()
            model.compile(tf.keras.optimizers.SGD(0.1), "mse")
        creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
        history = model.fit(creator, epochs=3, steps_per_epoch=2, verbose=0)
        return {"weights": start, "loss": history.history["loss"],
                "after": model.get_weights(), "contexts": seen}
    """
)


@pytest.mark.tensorflow
@pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra")
def test_fit_on_a_dataset_creator_matches_tf_keras():
    ours = tf_oracle.run_simdist(PROGRAM, 2)
    theirs, failures = tf_oracle.run_tf({"creator": (PROGRAM, ours, 2)})
    assert not failures, failures
    tf_oracle.assert_match(
        "creator", {"contexts": ours["contexts"]}, theirs["creator"], rtol=0, atol=0
    )
    rest = {k: v for k, v in ours.items() if k != "contexts"}
    tf_oracle.assert_match("creator", rest, theirs["creator"], rtol=1e-5, atol=1e-6)


def test_the_iterator_runs_on_across_epochs():
    batches = []

    def dataset_fn(ctx):
        return (
            tf.data.Dataset.range(100).map(lambda i: (tf.cast(i, tf.float32)[None], 0.0)).batch(1)
        )

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    seen = tf.keras.callbacks.LambdaCallback(on_train_batch_begin=lambda b, logs: batches.append(b))
    model.fit(
        tf.keras.utils.experimental.DatasetCreator(dataset_fn),
        epochs=2,
        steps_per_epoch=3,
        verbose=0,
        callbacks=[seen],
    )
    assert batches == [0, 1, 2, 0, 1, 2]  # and each hook got (batch, logs), as Keras 2 calls it


def test_bad_dataset_creators_are_refused():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    with pytest.raises(TypeError, match="must be a `callable`"):
        tf.keras.utils.experimental.DatasetCreator(3)
    with pytest.raises(TypeError, match="InputOptions"):
        tf.keras.utils.experimental.DatasetCreator(lambda ctx: None, input_options={"shard": 1})
    creator = tf.keras.utils.experimental.DatasetCreator(lambda ctx: tf.data.Dataset.range(3))
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(creator, epochs=1, verbose=0)
    with pytest.raises(TypeError, match="must return a Dataset"):
        model.fit(
            tf.keras.utils.experimental.DatasetCreator(lambda ctx: 3), steps_per_epoch=1, verbose=0
        )


def test_under_parameter_server_strategy_each_worker_builds_its_pipeline_as_in_tf():
    from simdist.distribute.cluster_resolver import ClusterSpec, SimpleClusterResolver

    spec = ClusterSpec({"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "ps": ["p0:1"]})
    strategy = tf.distribute.experimental.ParameterServerStrategy(SimpleClusterResolver(spec))
    contexts = []

    def dataset_fn(ctx):
        contexts.append((ctx.num_input_pipelines, ctx.input_pipeline_id))
        x = np.ones((16, 2), "float32")
        return tf.data.Dataset.from_tensor_slices((x, x[:, :1])).repeat().batch(4)

    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("sgd", "mse")
    creator = tf.keras.utils.experimental.DatasetCreator(dataset_fn)
    history = model.fit(creator, epochs=2, steps_per_epoch=4, verbose=0)
    assert contexts == [(1, 0), (1, 0)]  # one pipeline per worker, id 0 of 1 (TF's context)
    assert len(history.history["loss"]) == 2
