"""Reproducible mode: correctly rounded sums, the same bits for any p, order and algorithm."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist.collectives import execute

ALGOS = [
    "ring",
    "double_binary_tree",
    "recursive_doubling",
    "recursive_halving_doubling",
    "direct",
    "reduce_broadcast",
]


def nasty(rng, m: int, n: int, dtype) -> np.ndarray:
    """Values spanning many decades with cancellation: sums that depend on order."""
    big = rng.standard_normal((m, n)) * np.exp(rng.uniform(-20, 20, (m, n)))
    big[m // 2 :] = -big[: m - m // 2] * (1 + 1e-7 * rng.standard_normal((m - m // 2, n)))
    return big.astype(dtype)


@settings(max_examples=10)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(0, 40),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_same_bits_for_any_p_and_algorithm(seed, n, dtype):
    rng = np.random.default_rng(seed)
    values = nasty(rng, 8, n, dtype)
    exact = np.array([math.fsum(values[:, i].astype(np.float64)) for i in range(n)])
    results = []
    for p in (1, 2, 3, 4, 8):
        parts = np.array_split(values[rng.permutation(8)], p)  # any order, any split
        for algorithm in ALGOS:
            out = execute("all_reduce", algorithm, list(parts), reproducible=True, stacked=True)
            results.extend(out)
    assert all(r.tobytes() == results[0].tobytes() for r in results)
    if dtype == np.float64:  # math.fsum is correctly rounded too
        np.testing.assert_array_equal(results[0], exact)
    else:  # within half an ulp of float32 (fsum's float64 rounding is far below that)
        ulp = np.spacing(np.abs(results[0]).astype(np.float32)).astype(np.float64)
        assert np.all(np.abs(results[0] - exact) <= 0.5 * ulp + 1e-300)


def test_one_value_per_rank_any_order():
    rng = np.random.default_rng(3)
    values = nasty(rng, 6, 50, np.float32)
    ring = execute("all_reduce", "ring", list(values), reproducible=True)
    tree = execute(
        "all_reduce", "recursive_halving_doubling", list(values[::-1]), reproducible=True
    )
    assert all(r.tobytes() == ring[0].tobytes() for r in ring + tree)
    plain = [execute("all_reduce", a, list(values))[0] for a in ALGOS]
    assert len({p.tobytes() for p in plain}) > 1  # the plain orders do differ here


def test_rounding_ties_subnormals_and_specials():
    f64 = np.float64
    # 1 + 2**-53 is a tie: exact sum 1 + 2**-53 + 2**-106 rounds up
    vals = [
        np.array([1.0, 5e-324, np.inf, 1e308]),
        np.array([2**-53, 5e-324, 1.0, 1e308]),
        np.array([2**-106, -5e-324, -np.inf, -1e308]),
    ]
    out = execute("all_reduce", "ring", vals, reproducible=True)[0]
    assert out[0] == np.nextafter(f64(1.0), f64(2.0))
    assert out[1] == 5e-324
    assert np.isnan(out[2])
    assert out[3] == 1e308
    tie_even = execute(
        "all_reduce", "ring", [np.array([1.0]), np.array([2**-53])], reproducible=True
    )[0]
    assert tie_even[0] == 1.0
    over = execute("all_reduce", "ring", [np.array([3e38], np.float32)] * 2, reproducible=True)
    assert np.isinf(over[0][0])


def test_mean_reduce_scatter_and_reduce():
    rng = np.random.default_rng(5)
    values = nasty(rng, 4, 12, np.float64)
    exact = np.array([math.fsum(values[:, i]) for i in range(12)])
    mean = execute("all_reduce", "ring", list(values), "mean", reproducible=True)[0]
    np.testing.assert_array_equal(mean, exact / 4)
    rs = execute("reduce_scatter", "ring", list(values), reproducible=True)
    np.testing.assert_array_equal(np.concatenate(rs), exact)
    red = execute("reduce", "recursive_doubling", list(values), reproducible=True, root=2)
    np.testing.assert_array_equal(red[2], exact)
    assert red[0] is None


def test_large_blocks_and_bad_use():
    rng = np.random.default_rng(7)
    values = rng.standard_normal((3, 70_000)).astype(np.float32)
    a = execute("all_reduce", "ring", list(values), reproducible=True)[0]
    b = execute("all_reduce", "direct", list(values[::-1]), reproducible=True)[0]
    assert a.tobytes() == b.tobytes()
    with pytest.raises(ValueError, match="stacked=True needs reproducible"):
        execute("all_reduce", "ring", list(values), stacked=True)
    with pytest.raises(ValueError, match="not prod"):
        execute("all_reduce", "ring", list(values), "prod", reproducible=True)
