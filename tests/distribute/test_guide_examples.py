"""The distributed-training guide's examples (distributed_training_guide seed), verbatim.

The guide's printed losses depend on TF's random initial weights, which simdist does not
reproduce bit for bit; what the test holds is the shape of the output: one scalar float32
loss per step, falling steadily, as the guide prints (1.1195339, 1.11048, 1.1015058, ...).
"""

import re

import numpy as np

import simdist as tf


def test_custom_training_loop_from_the_guide():
    mirrored_strategy = tf.distribute.MirroredStrategy()
    assert mirrored_strategy.extended.worker_devices == tuple(
        f"/job:localhost/replica:0/task:0/device:GPU:{i}" for i in range(4)
    )
    global_batch_size = 10 * mirrored_strategy.num_replicas_in_sync

    with mirrored_strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
        optimizer = tf.keras.optimizers.SGD()

    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(1000).batch(global_batch_size)
    dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)

    loss_object = tf.keras.losses.BinaryCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )

    def compute_loss(labels, predictions):
        per_example_loss = loss_object(labels, predictions)
        return tf.nn.compute_average_loss(per_example_loss, global_batch_size=global_batch_size)

    def train_step(inputs):
        features, labels = inputs

        with tf.GradientTape() as tape:
            predictions = model(features, training=True)
            loss = compute_loss(labels, predictions)

        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))  # noqa: B905
        return loss

    @tf.function
    def distributed_train_step(dist_inputs):
        per_replica_losses = mirrored_strategy.run(train_step, args=(dist_inputs,))
        return mirrored_strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    printed = [str(distributed_train_step(dist_inputs)) for dist_inputs in dist_dataset]
    assert len(printed) == 1000 // global_batch_size
    assert all(
        re.fullmatch(r"tf\.Tensor\([0-9.]+, shape=\(\), dtype=float32\)", p) for p in printed
    )
    losses = np.array([float(p[10:].split(",")[0]) for p in printed])
    assert np.all(np.diff(losses) < 0)  # every step lowers the loss, as in the guide


def test_the_iterator_variant_from_the_guide():
    mirrored_strategy = tf.distribute.MirroredStrategy()
    with mirrored_strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(100).batch(8)
    iterator = iter(mirrored_strategy.experimental_distribute_dataset(dataset))
    features, labels = next(iterator)
    assert [t.shape for t in features.values] == [(2, 1)] * 4
    outputs = mirrored_strategy.run(lambda x: model(x), args=(features,))
    assert [o.device for o in outputs.values] == list(mirrored_strategy.extended.worker_devices)


def test_the_guide_tpu_strategy_snippet():
    from simdist.distribute import tpu_system

    tpu_address = "v4-8"
    try:
        cluster_resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address)
        tf.config.experimental_connect_to_cluster(cluster_resolver)
        tf.tpu.experimental.initialize_tpu_system(cluster_resolver)
        tpu_strategy = tf.distribute.TPUStrategy(cluster_resolver)
        assert tpu_strategy.num_replicas_in_sync == 4  # v4: one megacore device per chip
    finally:
        tf.tpu.experimental.shutdown_tpu_system(cluster_resolver)
        tpu_system._state.connected.clear()
        tf.config.set_virtual_devices(tpus=0)


def test_the_guide_parameter_server_snippet():
    config = {
        "cluster": {"chief": ["c:1"], "worker": ["w:1", "w:2"], "ps": ["p:1", "p:2"]},
        "task": {"type": "chief", "index": 0},
    }
    variable_partitioner = tf.distribute.experimental.partitioners.MinSizePartitioner(
        min_shard_bytes=4, max_shards=2
    )
    with tf.distribute.cluster_resolver.use_tf_config(config):
        strategy = tf.distribute.experimental.ParameterServerStrategy(
            tf.distribute.cluster_resolver.TFConfigClusterResolver(),
            variable_partitioner=variable_partitioner,
        )
        coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        v = tf.Variable([1.0, 2.0, 3.0, 4.0])
    assert len(v.variables) == 2  # sharded over the two ps tasks

    @tf.function
    def step():
        v.assign_add(tf.ones([4]))
        return tf.reduce_sum(v)

    results = [coordinator.schedule(step) for _ in range(3)]
    coordinator.join()
    assert v.numpy().tolist() == [4.0, 5.0, 6.0, 7.0]
    assert all(r.fetch() > 10.0 for r in results)
