"""Benchmark: the input pipelines a training loop starts from, simdist and TF side by side.

``tf.data.Dataset.from_tensor_slices((images, labels))``, then ``.batch(batch)`` or
``.shuffle(len).batch(batch)`` (the tutorials' pipeline), iterated: the tutorial CNN's
28x28x1 float32 images and int64 labels. Contenders, in turns, block by block
(``side_by_side``):

* **simdist, whole batches**: what ``batch`` over a slices source, or over a shuffle of
  one, does (each batch one copy, or one gather, of its rows);
* **simdist, rows one by one**: the same batches stacked from the rows one at a time, as
  every batch was until 2026-12-03 (a ``take(-1)`` before the ``batch`` passes every
  element through, one generator step each, and makes ``batch`` stack its input's
  elements);
* **TensorFlow**, where it is installed (``pip install 'simdist[tensorflow]'``).

    python scenarios/bench_input.py [--batch 64 256] [--rounds 7] [--calls 50] [--busy 0 2]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from busy_load import busy, label  # scenarios/ is on sys.path when run as a script
from side_by_side import print_table, side_by_side


def endless(tf, images, labels, batch: int, shuffle: bool, rows_one_by_one: bool = False):
    """``next`` of an endless iterator of batches."""
    dataset = tf.data.Dataset.from_tensor_slices((images, labels))
    if shuffle:
        dataset = dataset.shuffle(len(images), seed=0)
    if rows_one_by_one:
        dataset = dataset.take(-1)
    iterator = iter(dataset.batch(batch, drop_remainder=True).repeat())
    return lambda: next(iterator)


def contenders(images, labels, batch: int, shuffle: bool) -> dict:
    import simdist

    out = {
        "simdist, whole batches": endless(simdist, images, labels, batch, shuffle),
        "simdist, rows one by one": endless(simdist, images, labels, batch, shuffle, True),
    }
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
    except ImportError:
        return out
    out[f"TensorFlow {tf.__version__}"] = endless(tf, images, labels, batch, shuffle)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--images", type=int, default=8192)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50, help="batches per timing block")
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 2])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    images = rng.random((args.images, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, args.images)
    for processes in args.busy:
        rows = []
        with busy(processes):
            for shuffle in (False, True):
                for batch in args.batch:
                    pipeline = f"{'shuffle, ' if shuffle else ''}batch {batch}"
                    runs = contenders(images, labels, batch, shuffle)
                    ms = side_by_side(runs, args.rounds, args.calls)
                    rows += [(f"{pipeline}: {name}", f"{t:.3f}") for name, t in ms.items()]
        print(f"\nms per batch, {label(processes)} (median of {args.rounds} blocks)")
        print_table(("what", "ms/batch"), rows)


if __name__ == "__main__":
    main()
