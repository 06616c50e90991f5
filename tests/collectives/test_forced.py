"""The forced all-reduce (SIMDIST_FORCE_ALL_REDUCE), and that algorithms really sum in their
own orders: different bits on adversarial data, each within its rounding bound of the exact
sum (math.fsum), the exact sum correctly rounded."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist import settings as simdist_settings
from simdist.collectives import execute
from simdist.collectives.forced import FORCEABLE, forced_all_reduce
from simdist.distribute.cross_device_ops import reduce_arrays
from simdist.distribute.reduce_util import ReduceOp

# the orders simdist sensitivity compares by default (hierarchical: see below)
ORDERS = ["ring", "double_binary_tree", "recursive_doubling", "recursive_halving_doubling"]


def adversarial(rng, p: int, n: int) -> list[np.ndarray]:
    """Large and tiny values of both signs: every order of additions rounds differently."""
    sign = rng.choice([-1.0, 1.0], (p, n))
    scale = np.where(rng.random((p, n)) < 0.5, 1e7, 1e-3)
    return [row.astype(np.float32) for row in sign * scale * rng.uniform(1, 2, (p, n))]


def run(algorithm: str, arrays: list[np.ndarray], **kwargs) -> np.ndarray:
    if algorithm == "exact":
        return execute("all_reduce", "ring", arrays, reproducible=True)[0]
    return execute("all_reduce", algorithm, arrays, **kwargs)[0]


@pytest.mark.parametrize("p", [4, 5, 8])
def test_each_order_gives_different_bits_on_adversarial_data(p):
    arrays = adversarial(np.random.default_rng(p), p, 64)
    results = {a: run(a, arrays).tobytes() for a in [*ORDERS, "reduce_broadcast", "exact"]}
    assert len(set(results.values())) == len(results), "two orders gave the same bits"
    # hierarchical: one host of p ranks is the ring itself; 2 hosts x 2 add the pairs, then
    # the pairs' sums: recursive doubling's order; 2 hosts x 4 is an order of its own
    if p == 4:
        two_hosts = run("hierarchical", arrays, ranks_per_node=2).tobytes()
        assert two_hosts == results["recursive_doubling"]
    if p == 8:
        two_hosts = run("hierarchical", arrays, ranks_per_node=4).tobytes()
        assert two_hosts not in results.values()
    assert run("hierarchical", arrays, ranks_per_node=p).tobytes() == results["ring"]
    # direct adds in replica order, as reduce_broadcast does
    assert run("direct", arrays).tobytes() == results["reduce_broadcast"]


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    p=st.integers(2, 9),
    n=st.integers(1, 24),
    algorithm=st.sampled_from([*ORDERS, "direct", "reduce_broadcast", "hierarchical"]),
)
def test_every_order_stays_within_its_rounding_bound_of_the_exact_sum(seed, p, n, algorithm):
    arrays = adversarial(np.random.default_rng(seed), p, n)
    # hierarchical: two hosts when p is even, else one rank per host
    hosts = {"ranks_per_node": p // 2 if p % 2 == 0 else 1}
    kwargs = hosts if algorithm == "hierarchical" else {}
    result = run(algorithm, arrays, **kwargs).astype(np.float64)
    stack = np.stack(arrays).astype(np.float64)
    exact = np.array([math.fsum(stack[:, i]) for i in range(n)])
    # any order of p - 1 float32 additions: |sum - exact| <= gamma_{p-1} * sum |x|
    u = 2.0**-24
    gamma = (p - 1) * u / (1 - (p - 1) * u)
    assert np.all(np.abs(result - exact) <= gamma * np.abs(stack).sum(axis=0))
    # the exact mode is the correctly rounded sum: within half a float32 ulp
    exact32 = run("exact", arrays).astype(np.float64)
    half_ulp = 0.5 * np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(exact32 - exact) <= half_ulp)


def test_forcing_overrides_the_cross_device_ops_choice():
    arrays = adversarial(np.random.default_rng(1), 4, 32)
    assert forced_all_reduce() is None
    for name in ("recursive_doubling", "double_binary_tree"):
        with simdist_settings.override(force_all_reduce=name):
            # ReductionToOneDevice asks for reduce_broadcast; the setting wins
            total = reduce_arrays(ReduceOp.SUM, arrays, "reduce_broadcast")
        np.testing.assert_array_equal(total, run(name, arrays))
    with simdist_settings.override(force_all_reduce="exact"):
        mean = reduce_arrays(ReduceOp.MEAN, arrays, None)
    np.testing.assert_array_equal(mean, run("exact", arrays) / np.float32(4))


def test_an_unknown_forced_algorithm_lists_the_choices():
    with simdist_settings.override(force_all_reduce="ring_per_dimension"):
        with pytest.raises(ValueError, match="SIMDIST_FORCE_ALL_REDUCE") as info:
            forced_all_reduce()
    for name in FORCEABLE:
        assert name in str(info.value)


@pytest.mark.parametrize("name", ["recursive_doubling", "ring", "exact"])
def test_a_multi_worker_strategy_runs_the_forced_algorithm_over_every_rank(name):
    import simdist as tf
    from simdist.sim import launch

    arrays = adversarial(np.random.default_rng(7), 4, 16)

    def worker():
        strategy = tf.distribute.MultiWorkerMirroredStrategy()

        def replica():
            ctx = tf.distribute.get_replica_context()
            value = tf.constant(arrays[int(ctx.replica_id_in_sync_group)])
            return ctx.all_reduce("sum", value)

        return np.asarray(strategy.run(replica).values[0]._value)

    with simdist_settings.override(force_all_reduce=name):
        results = launch(worker, workers=2, devices_per_worker=2)
    for result in results:  # 2 workers x 2 replicas: ranks 0..3 in worker order
        np.testing.assert_array_equal(result, run(name, arrays))
