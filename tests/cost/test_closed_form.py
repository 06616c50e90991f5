"""Priced schedules of simdist.collectives equal the alpha-beta closed forms on an ideal
fully connected network (Thakur, Rabenseifner & Gropp 2005) — hypothesis over p, n, α, β."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdist.cost import closed_form as cf
from simdist.cost import price
from simdist.topology import NOMINAL_DEVICE, fully_connected

# (collective, algorithm, closed form, needs a power-of-two p)
CASES = [
    ("all_reduce", "ring", cf.ring_all_reduce, False),
    ("all_reduce", "recursive_doubling", cf.recursive_doubling_all_reduce, True),
    ("all_reduce", "recursive_halving_doubling", cf.rabenseifner_all_reduce, True),
    ("all_reduce", "direct", cf.direct_all_reduce, False),
    ("all_reduce", "reduce_broadcast", cf.reduce_broadcast_all_reduce, False),
    ("reduce_scatter", "ring", cf.ring_reduce_scatter, False),
    ("reduce_scatter", "recursive_halving_doubling", cf.recursive_halving_reduce_scatter, True),
    ("reduce_scatter", "direct", cf.direct_reduce_scatter, False),
    ("all_gather", "ring", cf.ring_all_gather, False),
    ("all_gather", "recursive_doubling", cf.recursive_doubling_all_gather, True),
    ("all_gather", "direct", cf.direct_all_gather, False),
    ("broadcast", "recursive_doubling", cf.binomial_broadcast, False),
    ("broadcast", "direct", cf.direct_broadcast, False),
    ("broadcast", "ring", cf.pipelined_chain_broadcast, False),
    ("reduce", "recursive_doubling", cf.binomial_reduce, False),
    ("reduce", "ring", cf.pipelined_chain_broadcast, False),
    ("all_to_all", "direct", cf.direct_all_to_all, False),
    ("all_to_all", "pairwise", cf.pairwise_all_to_all, False),
]

alphas = st.sampled_from([0.0, 1e-6, 3.7e-6, 2e-5])
bandwidths = st.sampled_from([1e9, 25e9, 3e11])


def _schedule(collective, algorithm, p, nbytes):
    from simdist.collectives.api import schedule

    return schedule(collective, algorithm, p, nbytes)


@pytest.mark.parametrize(
    "collective, algorithm, formula, pow2", CASES, ids=[f"{c}-{a}" for c, a, _, _ in CASES]
)
@given(p=st.integers(2, 9), per_rank=st.integers(1, 5000), alpha=alphas, bandwidth=bandwidths)
def test_priced_schedule_equals_closed_form(
    collective, algorithm, formula, pow2, p, per_rank, alpha, bandwidth
):
    if pow2:
        p = 1 << (p.bit_length() - 1)
    n = p * per_rank  # the whole buffer; p divides it
    # the schedule counts each rank's input: all-gather's is one piece of the gathered n
    nbytes = per_rank if collective == "all_gather" else n
    topo = fully_connected(p, bandwidth, alpha, device=NOMINAL_DEVICE)
    cost = price(_schedule(collective, algorithm, p, nbytes), topo)
    expected = formula(p, n, alpha, 1 / bandwidth)
    assert cost.time == pytest.approx(expected, rel=1e-9, abs=1e-18)


def test_non_power_of_two_rejected_by_power_of_two_formulas():
    with pytest.raises(ValueError, match="power-of-two"):
        cf.recursive_doubling_all_reduce(6, 1.0, 1.0, 1.0)


def test_one_rank_costs_nothing():
    assert cf.direct_broadcast(1, 8, 1, 1) == 0 and cf.binomial_broadcast(1, 8, 1, 1) == 0
