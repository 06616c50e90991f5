"""Scenario: parameter-server training with a ClusterCoordinator, the guide's custom loop.

The guide ("Distributed training with TensorFlow") creates the strategy and the
coordinator from a cluster resolver; this program runs the custom training loop of TF's
parameter-server tutorial on that pair with ``import simdist as tf``: a per-worker dataset,
``coordinator.schedule(step_fn, args=(per_worker_iterator,))`` steps, ``join`` at epoch
ends, a final ``fetch``. Workers and ps tasks are started virtually in this process; the
workers' steps interleave on a simulated clock chosen by ``--seed`` (same seed, same
digest), and ``--kill-worker W@K`` kills worker W during its step K: the step runs again on
another worker and every step is applied exactly once.

    python scenarios/parameter_server_training.py
    python scenarios/parameter_server_training.py --workers 2 --ps 1 --steps 20 --seed 3
    python scenarios/parameter_server_training.py --kill-worker 1@2
"""

from __future__ import annotations

import argparse
import hashlib
import sys

import numpy as np

import simdist as tf


def make_data(n: int = 512, features: int = 8, classes: int = 3, seed: int = 0):
    """A small synthetic classification set: labels from a fixed random linear teacher."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    teacher = rng.normal(size=(features, classes)).astype(np.float32)
    return x, np.argmax(x @ teacher, axis=1).astype(np.int64)


def digest(variables) -> str:
    """sha256 (first 16 hex digits) of the variables' bytes, in order."""
    h = hashlib.sha256()
    for v in variables:
        h.update(np.ascontiguousarray(np.asarray(v)).tobytes())
    return h.hexdigest()[:16]


def train(workers=2, ps=2, epochs=3, steps=10, batch=32, seed=0, kill_worker=None, out=print):
    """Run the loop; returns a dict of results (loss, accuracy, closures, digest...)."""
    tf.random.set_seed(seed)
    cluster = tf.train.ClusterSpec(
        {
            "chief": ["localhost:2220"],
            "worker": [f"localhost:{2230 + i}" for i in range(workers)],
            "ps": [f"localhost:{2240 + i}" for i in range(ps)],
        }
    )
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        cluster, task_type="chief", task_id=0
    )
    variable_partitioner = tf.distribute.experimental.partitioners.MinSizePartitioner(
        min_shard_bytes=128, max_shards=ps
    )
    strategy = tf.distribute.experimental.ParameterServerStrategy(
        resolver, variable_partitioner=variable_partitioner
    )
    faults = f"worker:{kill_worker}" if kill_worker else None
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(
        strategy, simdist_seed=seed, simdist_faults=faults
    )

    x, y = make_data(seed=seed)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(16, activation="relu", input_shape=(x.shape[1],)),
                tf.keras.layers.Dense(3),
            ]
        )
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
        accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE
    )

    def dataset_fn(input_context):
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=seed)
        return dataset.repeat().batch(input_context.get_per_replica_batch_size(batch))

    @tf.function
    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    per_worker_dataset = coordinator.create_per_worker_dataset(per_worker_dataset_fn)
    per_worker_iterator = iter(per_worker_dataset)

    @tf.function
    def step_fn(iterator):
        def replica_fn(batch_data, labels):
            with tf.GradientTape() as tape:
                logits = model(batch_data, training=True)
                per_example_loss = loss_object(labels, logits)
                loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=batch)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
            accuracy.update_state(labels, logits)
            return loss

        batch_data, labels = next(iterator)
        losses = strategy.run(replica_fn, args=(batch_data, labels))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    for epoch in range(epochs):
        accuracy.reset_state()
        for _ in range(steps):
            coordinator.schedule(step_fn, args=(per_worker_iterator,))
        coordinator.join()  # wait at epoch boundaries
        out(f"Finished epoch {epoch}, accuracy is {float(accuracy.result().numpy()):.6f}.")
    loss = coordinator.schedule(step_fn, args=(per_worker_iterator,))
    final_loss = float(loss.fetch())
    out(f"Final loss is {final_loss:.6f}")

    history = coordinator.simdist_history
    finished = sum(r.outcome == "finished" for r in history)
    killed = sum(r.outcome == "worker_failed" for r in history)
    per_worker = [sum(r.worker == w and r.outcome == "finished" for r in history)
                  for w in range(workers)]  # fmt: skip
    weights = digest(model.weights)
    out(
        f"Closures run: {finished} finished ({per_worker} per worker), {killed} lost to "
        f"worker failures and rerun; optimizer steps {int(optimizer.iterations.numpy())}; "
        f"simulated time {coordinator.simdist_time:.2f} s"
    )
    shards = [len(getattr(w, "variables", [w])) for w in model.weights]
    out(f"Variable shards: {shards}; weights digest {weights}")
    return {
        "loss": final_loss,
        "accuracy": float(accuracy.result().numpy()),
        "finished": finished,
        "killed": killed,
        "iterations": int(optimizer.iterations.numpy()),
        "digest": weights,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ps", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10, help="steps scheduled per epoch")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0, help="interleaving and data seed")
    parser.add_argument("--kill-worker", metavar="W@K", default=None,
                        help="kill worker W during its step K (1-based)")  # fmt: skip
    args = parser.parse_args(argv)
    train(args.workers, args.ps, args.epochs, args.steps, args.batch, args.seed, args.kill_worker)
    return 0


if __name__ == "__main__":
    sys.exit(main())
