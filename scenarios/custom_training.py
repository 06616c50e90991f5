"""Scenario: TensorFlow's whole custom-training tutorial, on N virtual GPUs, then its cost.

The tutorial ("Custom training with tf.distribute.Strategy") with ``import simdist as tf``: the
data set, the CNN under ``MirroredStrategy``, per-example losses scaled by the global batch
(``tf.nn.compute_average_loss``), accuracy metrics, a checkpoint every 2 epochs, the last
checkpoint restored into a model *without* a strategy and evaluated, then the tutorial's two
other ways to iterate: an iterator with ``next`` outside ``tf.function`` and a whole epoch
inside one (``distributed_train_epoch``). It ends with a cost report: one training step
profiled on a chosen topology (``simdist.sim.profile``, optionally written as a Chrome trace)
and the predicted weak scaling on it (``simdist.cost.scaling_table``).

    python scenarios/custom_training.py                      # 4 virtual GPUs, 10 epochs
    python scenarios/custom_training.py --dataset fashion_mnist --data-dir ~/fmnist
    python scenarios/custom_training.py --epochs 1 --steps 5 # the short mode CI runs

Data: ``synthetic`` (default; ``simdist.sim.load_synthetic_digits``, generated, no
download) or ``fashion_mnist`` (``tf.keras.datasets.fashion_mnist.load_data``: the four IDX
files must be on disk, in ``--data-dir``, ``~/.keras/datasets/fashion-mnist`` or
``/usr/share/datasets/fashion-mnist``, where Debian's ``dataset-fashion-mnist`` puts them).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

import simdist as tf
import simdist.keras.datasets
from simdist.demo import build_training, evaluate_restored

STRATEGIES = {
    "mirrored": lambda: tf.distribute.MirroredStrategy(),
    "central_storage": lambda: tf.distribute.experimental.CentralStorageStrategy(),
    "multi_worker": lambda: tf.distribute.MultiWorkerMirroredStrategy(),  # one worker
    "one_device": lambda: tf.distribute.OneDeviceStrategy("/gpu:0"),
}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=4, help="virtual GPUs (default 4)")
    parser.add_argument("--epochs", type=int, default=10, help="default 10, the tutorial's")
    parser.add_argument(
        "--steps", type=int, default=None, help="cap on steps per epoch (short mode)"
    )
    parser.add_argument("--dataset", choices=("synthetic", "fashion_mnist"), default="synthetic")
    parser.add_argument(
        "--strategy",
        choices=tuple(STRATEGIES),
        default="mirrored",
        help="the strategy of the guide's table to run the loop on (default: the tutorial's)",
    )
    parser.add_argument("--data-dir", default=None, help="folder of the Fashion-MNIST files")
    parser.add_argument("--batch-per-replica", type=int, default=64, help="default 64")
    parser.add_argument("--topology", default="dgx-h100", help="topology preset to price on")
    parser.add_argument("--trace", default=None, help="write a Chrome trace of one step here")
    parser.add_argument("--checkpoint-dir", default=None, help="default: a temporary folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("replicas", "epochs", "batch_per_replica"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be >= 1")
    return args


def load_images(args, global_batch: int):
    """``(train_images, train_labels), (test_images, test_labels)`` as the tutorial shapes
    them: float32 in [0, 1] with a channel axis; cut to ``--steps`` batches when given."""
    limit = None if args.steps is None else args.steps * global_batch
    if args.dataset == "fashion_mnist":
        fashion_mnist = tf.keras.datasets.fashion_mnist
        (train_images, train_labels), (test_images, test_labels) = fashion_mnist.load_data(
            path=args.data_dir
        )
    else:
        sizes = (60000, 10000) if limit is None else (limit, limit)
        (train_images, train_labels), (test_images, test_labels) = tf.sim.load_synthetic_digits(
            *sizes, seed=args.seed
        )
    train_images, train_labels = train_images[:limit], train_labels[:limit]
    test_images, test_labels = test_images[:limit], test_labels[:limit]
    # The tutorial's preprocessing: add a channel axis, scale to [0, 1].
    train_images = train_images[..., None] / np.float32(255)
    test_images = test_images[..., None] / np.float32(255)
    return (train_images, train_labels), (test_images, test_labels)


def main(argv=None) -> dict:
    args = parse_args(argv)
    tf.config.set_virtual_devices(gpus=args.replicas)
    tf.random.set_seed(args.seed)
    print(tf.__version__)

    strategy = STRATEGIES[args.strategy]()
    print(f"Number of devices: {strategy.num_replicas_in_sync}")

    BATCH_SIZE_PER_REPLICA = args.batch_per_replica
    GLOBAL_BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync
    EPOCHS = args.epochs
    (train_images, train_labels), (test_images, test_labels) = load_images(args, GLOBAL_BATCH_SIZE)
    BUFFER_SIZE = len(train_images)

    train_dataset = (
        tf.data.Dataset.from_tensor_slices((train_images, train_labels))
        .shuffle(BUFFER_SIZE, seed=args.seed)
        .batch(GLOBAL_BATCH_SIZE)
    )
    test_dataset = tf.data.Dataset.from_tensor_slices((test_images, test_labels)).batch(
        GLOBAL_BATCH_SIZE
    )
    train_dist_dataset = strategy.experimental_distribute_dataset(train_dataset)
    test_dist_dataset = strategy.experimental_distribute_dataset(test_dataset)

    owned_dir = None
    checkpoint_dir = args.checkpoint_dir
    if checkpoint_dir is None:
        owned_dir = tempfile.TemporaryDirectory(prefix="simdist-custom-training-")
        checkpoint_dir = owned_dir.name
    checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")

    # The tutorial's loss, metrics, model, optimizer, checkpoint and steps (simdist.demo).
    training = build_training(strategy, GLOBAL_BATCH_SIZE)
    model, checkpoint, train_step = training.model, training.checkpoint, training.train_step
    test_loss, train_accuracy = training.test_loss, training.train_accuracy
    test_accuracy = training.test_accuracy
    distributed_train_step = training.distributed_train_step
    distributed_test_step = training.distributed_test_step

    result: dict = {}
    for epoch in range(EPOCHS):
        # TRAIN LOOP
        total_loss = 0.0
        num_batches = 0
        for x in train_dist_dataset:
            total_loss += distributed_train_step(x)
            num_batches += 1
        train_loss = total_loss / num_batches

        # TEST LOOP
        for x in test_dist_dataset:
            distributed_test_step(x)

        if epoch % 2 == 0:
            checkpoint.save(checkpoint_prefix)

        template = "Epoch {}, Loss: {}, Accuracy: {}, Test Loss: {}, Test Accuracy: {}"
        print(
            template.format(
                epoch + 1,
                train_loss,
                train_accuracy.result() * 100,
                test_loss.result(),
                test_accuracy.result() * 100,
            )
        )
        result.update(
            train_loss=float(train_loss),
            train_accuracy=float(train_accuracy.result()),
            test_accuracy=float(test_accuracy.result()),
        )
        test_loss.reset_states()
        train_accuracy.reset_states()
        test_accuracy.reset_states()

    # Restore the latest checkpoint and test, without a strategy.
    restored = evaluate_restored(
        tf.train.latest_checkpoint(checkpoint_dir), test_images, test_labels, GLOBAL_BATCH_SIZE
    )
    print(f"Accuracy after restoring the saved model without strategy: {restored * 100}")
    result["restored_accuracy"] = float(restored)
    if owned_dir is not None:
        owned_dir.cleanup()

    # Other ways to iterate (1): an iterator, a given number of steps, outside tf.function.
    # (The tutorial's loop variable is `_`, so its lines repeat the last `epoch`; kept as is.)
    steps_per_iter_epoch = 10 if args.steps is None else min(10, args.steps)
    for _ in range(EPOCHS):
        total_loss = 0.0
        num_batches = 0
        train_iter = iter(train_dist_dataset)

        for _ in range(steps_per_iter_epoch):
            total_loss += distributed_train_step(next(train_iter))
            num_batches += 1
        average_train_loss = total_loss / num_batches

        template = "Epoch {}, Loss: {}, Accuracy: {}"
        print(template.format(epoch + 1, average_train_loss, train_accuracy.result() * 100))
        train_accuracy.reset_states()

    # Other ways to iterate (2): a whole epoch inside a tf.function.
    @tf.function
    def distributed_train_epoch(dataset):
        total_loss = 0.0
        num_batches = 0
        for x in dataset:
            per_replica_losses = strategy.run(train_step, args=(x,))
            total_loss += strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)
            num_batches += 1
        return total_loss / tf.cast(num_batches, dtype=tf.float32)

    for epoch in range(EPOCHS):
        train_loss = distributed_train_epoch(train_dist_dataset)

        template = "Epoch {}, Loss: {}, Accuracy: {}"
        print(template.format(epoch + 1, train_loss, train_accuracy.result() * 100))

        train_accuracy.reset_states()

    result.update(cost_report(args, model, strategy, distributed_train_step, train_dist_dataset))
    return result


def cost_report(args, model, strategy, train_step_fn, dist_dataset) -> dict:
    """Profile one training step on ``--topology`` and print the predicted weak scaling."""
    from simdist.cost import format_scaling_table, scaling_table
    from simdist.topology import get_topology

    topology = get_topology(args.topology)
    with tf.sim.profile(topology=args.topology) as prof:
        train_step_fn(next(iter(dist_dataset)))
    report = prof.report()
    print("")
    print(f"One training step of {strategy.num_replicas_in_sync} replicas on {args.topology}:")
    print(str(report))
    if args.trace is not None:
        prof.write_chrome_trace(args.trace)
        print(f"Chrome trace of that step: {args.trace} (open it in https://ui.perfetto.dev)")
    counts = [c for c in (1, 2, 4, 8, 16, 32) if c <= topology.num_devices]
    rows = scaling_table(model, (28, 28, 1), args.batch_per_replica, topology, counts)
    print("")
    print(
        f"Predicted step on {args.topology} ({args.batch_per_replica} examples per device, "
        "weak scaling):"
    )
    print(format_scaling_table(rows))
    return {"profiled_step_time": report.total_time, "scaling": rows}


if __name__ == "__main__":
    try:
        main()
    except FileNotFoundError as exc:  # e.g. Fashion-MNIST files absent: say what to do
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
