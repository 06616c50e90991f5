"""Benchmark: 2x2 max pooling of the tutorial CNN, forward and backward, two ways.

* **window-major**: simdist's max-pooling kernels (``simdist.core.ops.pool_ops``; a few
  images at a time copied to ``[kh*kw, n, Ho, Wo, C]``, every later pass over contiguous
  memory, the first-maximum masks kept from the forward).
* **window views**: the same arithmetic as passes over strided window views of the input,
  what simdist did before (re-implemented here: the maxima, then in the backward the
  first-maximum masks from the input again and a multiply into each window view).

Both are the kernels alone (arrays in, arrays out: no tensors, no tape); the op's own cost
is the same for both, and the whole step is ``bench_training.py``'s.

The shapes are the CNN's two poolings at batch 64 (one replica) and 16 (a replica's share of
4). The contenders run in turns, block by block (``side_by_side``), quiet and beside busy
processes. The two are checked to give the same bits first.

    python scenarios/bench_pooling.py [--rounds 7] [--calls 20] [--busy 0 2]
"""

from __future__ import annotations

import argparse

import numpy as np
from busy_load import busy, label  # scenarios/ is on sys.path when run as a script
from side_by_side import print_table, side_by_side

SHAPES = {
    "pool 1, batch 64": (64, 26, 26, 32),
    "pool 1, batch 16": (16, 26, 26, 32),
    "pool 2, batch 64": (64, 11, 11, 64),
    "pool 2, batch 16": (16, 11, 11, 64),
}


def window_views(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """2x2 VALID max pooling's forward and input gradient as passes over window views."""
    n, hh, ww, c = x.shape
    ho, wo = hh // 2, ww // 2
    x6 = x[:, : 2 * ho, : 2 * wo].reshape(n, ho, 2, wo, 2, c)
    windows = [x6[:, :, i, :, j, :] for i in range(2) for j in range(2)]
    y = np.empty((n, ho, wo, c), dtype=x.dtype)
    np.maximum(windows[0], windows[1], out=y)
    for window in windows[2:]:
        np.maximum(y, window, out=y)
    dx = np.empty(x.shape, dtype=g.dtype)
    dx[:, 2 * ho :] = 0  # the ragged edge no window covers
    dx[:, : 2 * ho, 2 * wo :] = 0
    d6 = dx[:, : 2 * ho, : 2 * wo].reshape(n, ho, 2, wo, 2, c)
    taken = None
    for k, window in enumerate(windows):
        hit = window == y
        if taken is None:
            taken = hit.copy()
        else:
            np.greater(hit, taken, out=hit)
            taken |= hit
        np.multiply(g, hit, out=d6[:, :, k // 2, :, k % 2, :])
    return dx


def simdist_contenders(x: np.ndarray, g: np.ndarray) -> dict:
    """simdist's kernels themselves (no tensors, no tape), beside the window views."""
    from simdist.core.ops import pool_ops
    from simdist.core.ops._windows import resolve_padding

    h, w = resolve_padding("VALID", x.shape[1:3], (2, 2), (2, 2))

    def window_major() -> np.ndarray:
        y, masks = pool_ops._max_forward(x, h, w, masks_wanted=True)
        return pool_ops._max_backward(g, y, x.shape, masks, h, w)

    if window_major().tobytes() != window_views(x, g).tobytes():
        raise AssertionError("the window-major gradient is not the window views' bits")
    return {"window-major": window_major, "window views": lambda: window_views(x, g)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating blocks (median)")
    parser.add_argument("--calls", type=int, default=20, help="calls per timing block")
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 2], help="busy processes")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    contenders = {}
    for name, shape in SHAPES.items():
        x = np.maximum(rng.standard_normal(shape, dtype=np.float32), 0)  # a relu's output
        g = rng.standard_normal((shape[0], shape[1] // 2, shape[2] // 2, shape[3]), np.float32)
        contenders[name] = simdist_contenders(x, g)
    for processes in args.busy:
        with busy(processes):
            rows = []
            for name, calls in contenders.items():
                ms = side_by_side(calls, args.rounds, args.calls)
                major, views = ms["window-major"], ms["window views"]
                rows.append((name, f"{major:.2f}", f"{views:.2f}", f"{views / major:.2f}x"))
            print(f"\nforward + backward, ms per call ({label(processes)})")
            print_table(("shape", "window-major", "window views", "speed-up"), rows)


if __name__ == "__main__":
    main()
