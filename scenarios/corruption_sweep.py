"""Corruption sweep: change every byte, and truncate at every length, of small saved files.

For a small ``tf.train.Checkpoint`` (its ``.index`` and data file), a compiled model saved
as a directory and as ``*.keras``, and ``save_weights`` to ``*.weights.h5``, each byte of
each file is replaced by a seeded random other value, and each file is cut at every length;
after each damage the file is loaded as a user would. A damage is *detected* when the load
raises ``DataLossError``, ``NotFoundError`` or ``UnimplementedError`` and the target
variables are unchanged; anything else (a load that succeeds, another exception) is a miss.

    python scenarios/corruption_sweep.py            # every byte
    python scenarios/corruption_sweep.py --step 7   # every 7th byte (quicker)

Prints one row per file and exits 1 on any miss.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

import simdist as tf
from simdist import errors
from simdist.checkpoint import format as ckpt_format

DETECTED = (errors.DataLossError, errors.NotFoundError, errors.UnimplementedError)


def _model():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(2,))])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(np.ones((4, 2), np.float32), np.zeros((4, 2), np.float32), verbose=0)
    return model


def _cases(directory: str):
    """(label, files, load) for each saved form; ``load`` returns the loaded weights."""
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([[3, 4]], dtype=tf.int32)
    prefix = tf.train.Checkpoint(a=a, b=b).write(os.path.join(directory, "small"))

    def load_checkpoint():
        targets = [tf.Variable([0.0, 0.0]), tf.Variable([[0, 0]], dtype=tf.int32)]
        tf.train.Checkpoint(a=targets[0], b=targets[1]).read(prefix)
        return [t.numpy() for t in targets]

    yield "checkpoint", [prefix + ".index", *ckpt_format.data_files(prefix)], load_checkpoint
    model = _model()
    for name in ("m", "m.keras"):
        path = os.path.join(directory, name)
        model.save(path)
        files = (
            [path]
            if os.path.isfile(path)
            else sorted(os.path.join(path, f) for f in os.listdir(path))
        )
        yield (
            f"model.save('{name}')",
            files,
            lambda path=path: tf.keras.models.load_model(path).get_weights(),
        )
    weights = os.path.join(directory, "w.weights.h5")
    model.save_weights(weights)

    def load_weights():
        fresh = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(2,))])
        fresh.load_weights(weights)
        return fresh.get_weights()

    yield "save_weights('w.weights.h5')", [weights], load_weights


def sweep_file(path: str, load, rng: np.random.Generator, step: int) -> tuple[int, int]:
    """(damages tried, damages missed) for one file."""
    original = open(path, "rb").read()
    damages = []
    for position in range(0, len(original), step):
        changed = bytearray(original)
        changed[position] = (original[position] + int(rng.integers(1, 256))) % 256
        damages.append(bytes(changed))
    damages += [original[:length] for length in range(0, len(original), step)]
    missed = 0
    try:
        for damaged in damages:
            with open(path, "wb") as f:
                f.write(damaged)
            try:
                load()
            except DETECTED:
                continue
            except Exception as exc:  # noqa: BLE001 - an undocumented exception is a miss
                print(f"  miss in {os.path.basename(path)}: {type(exc).__name__}: {exc}")
            missed += 1
    finally:
        with open(path, "wb") as f:
            f.write(original)
    load()
    return len(damages), missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--step", type=int, default=1, help="sweep every STEP-th byte")
    args = parser.parse_args(argv)
    if args.step < 1:
        parser.error("--step must be at least 1")
    rng = np.random.default_rng(args.seed)
    total_tried = total_missed = 0
    print(f"{'saved form':<30} {'file':<32} {'bytes':>6} {'damages':>8} {'detected':>9}")
    with tempfile.TemporaryDirectory() as directory:
        for label, files, load in _cases(directory):
            for path in files:
                tried, missed = sweep_file(path, load, rng, args.step)
                total_tried += tried
                total_missed += missed
                name = os.path.basename(path)
                size = os.path.getsize(path)
                share = 100.0 * (tried - missed) / tried
                print(f"{label:<30} {name:<32} {size:>6} {tried:>8} {share:>8.1f}%")
    share = 100.0 * (total_tried - total_missed) / total_tried
    print(f"all: {total_tried} damaged files, {total_tried - total_missed} detected ({share:.1f}%)")
    return 1 if total_missed else 0


if __name__ == "__main__":
    sys.exit(main())
