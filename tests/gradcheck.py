"""Central finite differences in float64, to check every op's gradient rule."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import simdist as tf


def numeric_gradients(fn: Callable, arrays: list[np.ndarray], weights: np.ndarray, eps: float):
    """d/dx of sum(fn(*x) * weights) for each x, by central differences."""

    def objective(values):
        out = fn(*[tf.constant(v) for v in values])
        return float(np.sum(np.asarray(out, dtype=np.float64) * weights))

    grads = []
    for i, base in enumerate(arrays):
        g = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (objective(plus) - objective(minus)) / (2 * eps)
        grads.append(g)
    return grads


def check_gradients(
    fn: Callable,
    *arrays: np.ndarray,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """Assert that the tape's gradients of ``fn`` match central differences.

    ``fn`` takes tensors and returns a tensor; the check differentiates
    ``sum(fn(*x) * w)`` for fixed random weights ``w``, so every output element counts.
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    tensors = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        out = fn(*tensors)
    weights = np.random.default_rng(seed).standard_normal(np.shape(out))
    analytic = tape.gradient(out, tensors, output_gradients=tf.constant(weights))
    numeric = numeric_gradients(fn, arrays, weights, eps)
    for i, (a, n) in enumerate(zip(analytic, numeric, strict=True)):
        assert a is not None, f"input {i}: no gradient (unconnected)"
        np.testing.assert_allclose(
            np.asarray(a), n, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}"
        )
