"""Scenario: the distributed-training guide's Keras examples (compile/fit/evaluate) on N GPUs.

The guide's section "Using tf.distribute.Strategy with Keras Model.fit", with
``import simdist as tf``: a one-unit ``Dense`` model created under ``MirroredStrategy``,
``model.compile(loss='mse', optimizer='sgd')``, ``model.fit(dataset, epochs=2)`` and
``model.evaluate(dataset)`` on a ``tf.data`` pipeline, then the same with NumPy arrays. Then
the trained model is saved (``model.save``) and loaded back without a strategy
(``tf.keras.models.load_model``), and the run ends with a cost report: one ``fit`` step
profiled on a chosen topology (optionally written as a Chrome trace) and the predicted weak
scaling on it.

    python scenarios/keras_fit.py                    # 4 virtual GPUs, the guide's 2 epochs
    python scenarios/keras_fit.py --epochs 1 --steps 5
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import simdist as tf


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=4, help="virtual GPUs (default 4)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs (default 2, the guide's)")
    parser.add_argument("--steps", type=int, default=None, help="cap on steps per epoch")
    parser.add_argument("--topology", default="dgx-h100", help="topology preset to price on")
    parser.add_argument("--trace", default=None, help="write a Chrome trace of one step here")
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.replicas < 1 or args.epochs < 1 or (args.steps is not None and args.steps < 1):
        parser.error("--replicas, --epochs and --steps must be >= 1")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    tf.config.set_virtual_devices(gpus=args.replicas)
    tf.random.set_seed(args.seed)

    mirrored_strategy = tf.distribute.MirroredStrategy()
    print(f"Number of devices: {mirrored_strategy.num_replicas_in_sync}")

    with mirrored_strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])

    model.compile(loss="mse", optimizer="sgd")

    # A tf.data pipeline as input.
    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(100).batch(10)
    history = model.fit(dataset, epochs=args.epochs, steps_per_epoch=args.steps,
                        verbose=args.verbose)  # fmt: skip
    loss = model.evaluate(dataset, steps=args.steps, verbose=args.verbose)
    print(f"evaluate (dataset): {loss}")

    # NumPy arrays as input.
    inputs, targets = np.ones((100, 1)), np.ones((100, 1))
    numpy_history = model.fit(inputs, targets, epochs=args.epochs, batch_size=10,
                              steps_per_epoch=args.steps, verbose=args.verbose)  # fmt: skip
    print(f"fit losses (dataset): {history.history['loss']}")
    print(f"fit losses (NumPy): {numpy_history.history['loss']}")

    # Save, then load without a strategy: the same predictions.
    with tempfile.TemporaryDirectory(prefix="simdist-keras-fit-") as directory:
        path = os.path.join(directory, "model")
        model.save(path)
        restored = tf.keras.models.load_model(path)
    probe = np.array([[1.0], [2.0]], np.float32)
    same = np.allclose(restored(probe).numpy(), model(probe).numpy(), rtol=1e-6)
    print(f"Saved and loaded without a strategy: predictions equal: {same}")

    result = {
        "history": history.history,
        "numpy_history": numpy_history.history,
        "evaluate": loss,
        "restored_equal": bool(same),
    }
    result.update(cost_report(args, model, mirrored_strategy, dataset))
    return result


def cost_report(args, model, strategy, dataset) -> dict:
    """Profile one ``fit`` step on ``--topology``; print the predicted weak scaling."""
    from simdist.cost import format_scaling_table, scaling_table
    from simdist.topology import get_topology

    topology = get_topology(args.topology)
    with tf.sim.profile(topology=args.topology) as prof:
        model.fit(dataset, epochs=1, steps_per_epoch=1, verbose=0)
    report = prof.report()
    print("")
    print(f"One fit step of {strategy.num_replicas_in_sync} replicas on {args.topology}:")
    print(str(report))
    if args.trace is not None:
        prof.write_chrome_trace(args.trace)
        print(f"Chrome trace of that step: {args.trace} (open it in https://ui.perfetto.dev)")
    per_device = max(1, 10 // strategy.num_replicas_in_sync)
    counts = [c for c in (1, 2, 4, 8) if c <= topology.num_devices]
    rows = scaling_table(model, (1,), per_device, topology, counts)
    print("")
    print(f"Predicted step on {args.topology} ({per_device} examples per device, weak scaling):")
    print(format_scaling_table(rows))
    return {"profiled_step_time": report.total_time, "scaling": rows}


if __name__ == "__main__":
    main()
