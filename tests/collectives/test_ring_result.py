"""The ring all-reduce's result computed directly equals executing the ring plan, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist import collectives
from simdist.collectives.algorithms import build_plan
from simdist.collectives.api import OPS, make_spec
from simdist.collectives.executor import rank_result, run_plan

SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3e38])


def _arrays(rng, p, n, dtype):
    if np.dtype(dtype).kind == "i":
        ints = [rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64) for _ in range(p)]
        return [a.astype(dtype) for a in ints]
    out = []
    for _ in range(p):
        a = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
        mask = rng.random(n) < 0.1
        a[mask] = rng.choice(SPECIALS, mask.sum()).astype(dtype)
        out.append(a)
    return out


@settings(max_examples=60, deadline=None)
@given(
    p=st.integers(1, 8),
    n=st.integers(0, 70),
    dtype=st.sampled_from([np.float16, np.float32, np.float64, np.int32]),
    op=st.sampled_from(["sum", "max", "min", "prod"]),
    seed=st.integers(0, 2**16),
)
def test_the_direct_result_is_the_plans_bits(p, n, dtype, op, seed):
    plan = build_plan(make_spec("all_reduce", "ring", p, n))
    with np.errstate(all="ignore"):  # float16 overflows to inf on purpose
        flats = _arrays(np.random.default_rng(seed), p, n, dtype)
        expected = run_plan(plan, flats, OPS[op])
        got = rank_result(plan, flats, OPS[op])
    for result in expected:  # every rank ends with the same bits
        assert result.tobytes() == got.tobytes()


def test_reduce_arrays_takes_the_direct_path_for_the_ring_and_keeps_its_bits():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((33, 7)).astype(np.float32) for _ in range(4)]
    direct = collectives.reduce_arrays("sum", arrays, algorithm="ring")
    (planned, *_rest) = collectives.execute("all_reduce", "ring", arrays, "sum")
    assert direct.shape == (33, 7) and direct.tobytes() == planned.tobytes()
    mean = collectives.reduce_arrays("mean", arrays, algorithm="ring")
    assert mean.tobytes() == collectives.execute("all_reduce", "ring", arrays, "mean")[0].tobytes()


def test_rank_result_is_run_plan_for_every_all_reduce_plan():
    from simdist.collectives.algorithms import ALGORITHMS

    rng = np.random.default_rng(2)
    flats = [rng.standard_normal(10).astype(np.float32) for _ in range(4)]
    for algorithm in ALGORITHMS["all_reduce"]:
        try:
            plan = build_plan(make_spec("all_reduce", algorithm, 4, 10))
        except ValueError:  # needs a topology (hosts, torus dims) this call does not give
            continue
        expected = run_plan(plan, flats, np.add)
        for rank in range(4):
            got = rank_result(plan, flats, np.add, rank)
            assert got.tobytes() == expected[rank].tobytes(), (algorithm, rank)
        total = collectives.reduce_arrays("sum", [f.reshape(2, 5) for f in flats], algorithm)
        assert total.tobytes() == expected[0].tobytes(), algorithm
