"""Scenario: the MultiWorkerMirroredStrategy API page's example, as a virtual cluster or under MPI.

The API page's custom loop with ``import simdist as tf``: a ``Dense(2)`` model and an SGD
optimizer created under ``MultiWorkerMirroredStrategy``, input from
``distribute_datasets_from_function`` (each worker's pipeline seeded by its
``input_pipeline_id``, so the run is reproducible), and ``train_step`` in a
``tf.function`` calling ``strategy.run``. The same file runs two ways:

    python scenarios/multi_worker.py --workers 2 --devices-per-worker 2   # one process
    mpiexec -n 2 python -m mpi4py scenarios/multi_worker.py --devices-per-worker 2
    TF_CONFIG='{"cluster": {"worker": ["localhost:12345", "localhost:23456"]},
                "task": {"type": "worker", "index": 0}}' \
        python scenarios/multi_worker.py --devices-per-worker 2   # and index 1 in a 2nd shell

and prints the same "weights digest" line both ways (bit-identical final weights): the
virtual cluster and the MPI run execute the same all-reduce plans with the same arithmetic.
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

import simdist as tf
from simdist.backends.process_env import tf_config_cluster
from simdist.distribute.cluster_resolver import in_mpi_job


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="virtual workers (not under MPI)")
    parser.add_argument("--devices-per-worker", type=int, default=2, help="virtual GPUs each")
    parser.add_argument("--steps", type=int, default=20, help="training steps (default 20)")
    parser.add_argument("--batch-per-replica", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--communication",
        default="AUTO",
        choices=("AUTO", "RING", "NCCL"),
        help="CommunicationImplementation (the cross-worker algorithm)",
    )
    args = parser.parse_args(argv)
    if min(args.workers, args.steps, args.batch_per_replica) < 1 or args.devices_per_worker < 0:
        parser.error("--workers, --steps, --batch-per-replica must be >= 1")
    return args


def digest(arrays) -> str:
    """A short fingerprint of the exact bits of ``arrays``."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def train(args: argparse.Namespace) -> dict:
    """One worker's program (every worker runs it unchanged, as the API page asks)."""
    tf.random.set_seed(args.seed)
    options = tf.distribute.experimental.CommunicationOptions(implementation=args.communication)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(5,))])
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)

    def dataset_fn(ctx):
        rng = np.random.default_rng([args.seed, ctx.input_pipeline_id])
        x = rng.random((64, 5)).astype(np.float32)
        y = rng.integers(2, size=(64, 1))
        dataset = tf.data.Dataset.from_tensor_slices((x, y))
        return dataset.repeat().batch(args.batch_per_replica, drop_remainder=True)

    dist_dataset = strategy.distribute_datasets_from_function(dataset_fn)
    iterator = iter(dist_dataset)
    global_batch = args.batch_per_replica * strategy.num_replicas_in_sync

    @tf.function
    def train_step(iterator):
        def step_fn(inputs):
            features, labels = inputs
            with tf.GradientTape() as tape:
                logits = model(features, training=True)
                per_example = tf.keras.losses.sparse_categorical_crossentropy(
                    labels, logits, from_logits=True
                )
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return loss

        losses = strategy.run(step_fn, args=(next(iterator),))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    losses = [float(train_step(iterator)) for _ in range(args.steps)]
    weights = model.get_weights()
    worker = strategy.extended._worker_index
    return {
        "worker": worker,
        "num_workers": strategy.extended._num_workers,
        "replicas": strategy.num_replicas_in_sync,
        "losses": losses,
        "digest": digest(weights),
    }


def report(result: dict) -> None:
    print(
        f"{result['num_workers']} worker(s), {result['replicas']} replicas in sync; "
        f"loss {result['losses'][0]:.6f} -> {result['losses'][-1]:.6f}"
    )
    print(f"weights digest: {result['digest']}")


def main(argv=None) -> dict:
    args = parse_args(argv)
    if in_mpi_job():  # one process per worker: this process is one of them
        from simdist.backends.mpi import run_worker_main

        tf.config.set_virtual_devices(gpus=args.devices_per_worker)
        result = run_worker_main(lambda: train(args))
        if result["worker"] == 0:
            report(result)
        return result
    if tf_config_cluster() is not None:  # one process per TF_CONFIG task: this is one
        tf.config.set_virtual_devices(gpus=args.devices_per_worker)
        result = train(args)
        if result["worker"] == 0:
            report(result)
        return result
    results = tf.sim.launch(
        train, workers=args.workers, devices_per_worker=args.devices_per_worker, args=(args,)
    )
    if len({r["digest"] for r in results}) != 1:
        raise SystemExit("workers ended with different weights: a bug in simdist")
    report(results[0])
    return results[0]


if __name__ == "__main__":
    main()
