"""Benchmark: what the Keras-op-layer dispatch of ``simdist.symbolic_dispatch`` costs per call.

Every public op of the faces (``tf.add``, ``tf.nn.relu``, ``tf.concat``...) is a wrapper that
looks for KerasTensors among its arguments before calling the op. This times one call of the
wrapper and of what it wraps, in alternating rounds: a function that does nothing (so the
difference is the dispatch alone) and ops on small eager tensors (where the wrapper's share
is largest), before and after Keras is imported, and prints the overhead per call.

    python scenarios/bench_symbolic_dispatch.py [--calls 20000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import sys
import timeit

import numpy as np

import simdist as tf
from simdist import symbolic_dispatch
from simdist.core.ops import array_ops, math_ops, nn_ops


def best_microseconds(fn, calls: int, rounds: int) -> float:
    return min(timeit.repeat(fn, number=calls, repeat=rounds)) / calls * 1e6


def interleaved(plain, wrapped, calls: int, rounds: int) -> tuple[float, float]:
    """Best time per call of each, measured in alternating rounds (the same noisy minutes)."""
    best_plain = best_wrapped = float("inf")
    for _ in range(rounds):
        best_plain = min(best_plain, best_microseconds(plain, calls, 1))
        best_wrapped = min(best_wrapped, best_microseconds(wrapped, calls, 1))
    return best_plain, best_wrapped


def noop(x, y, name=None):
    """A function that does nothing: its wrapper's time is the dispatch itself."""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    x = tf.constant(np.ones((4, 8), np.float32))
    wrapped_noop = symbolic_dispatch._wrap(noop, "noop")
    cases = [
        ("no-op(x, x)", lambda: wrapped_noop(x, x), lambda: noop(x, x)),
        ("add(x, x)", lambda: tf.add(x, x), lambda: math_ops.add(x, x)),
        ("nn.relu(x)", lambda: tf.nn.relu(x), lambda: nn_ops.relu(x)),
        ("concat([x, x], -1)", lambda: tf.concat([x, x], -1),
         lambda: array_ops.concat([x, x], -1)),
    ]  # fmt: skip
    print(f"{'call':<22} {'keras':<8} {'op (us)':>9} {'wrapped (us)':>13} {'overhead (us)':>14}")
    for keras_loaded in (False, True):
        if keras_loaded:
            tf.keras.Input((1,))  # imports Keras: the wrapper now scans the arguments
        assert ("simdist.keras.engine.keras_tensor" in sys.modules) == keras_loaded
        for label, wrapped, plain in cases:
            op, public = interleaved(plain, wrapped, args.calls, args.rounds)
            state = "loaded" if keras_loaded else "no"
            print(f"{label:<22} {state:<8} {op:>9.2f} {public:>13.2f} {public - op:>14.2f}")


if __name__ == "__main__":
    main()
