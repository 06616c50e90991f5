"""price_plan (vectorized, from the plan's arrays) gives exactly price(plan.to_schedule())."""

import pytest

from simdist.collectives.algorithms import build_plan
from simdist.collectives.api import make_spec
from simdist.cost.network import price, price_plan
from simdist.topology import fully_connected, get_topology, torus


@pytest.mark.parametrize(
    "topology, collective, algorithm",
    [
        (get_topology("v4-32"), "all_reduce", "ring_per_dimension"),
        (get_topology("v5litepod-16"), "all_reduce", "ring"),
        (torus((2, 3, 2), 1e9, 1e-6, wraparound=False), "all_reduce", "ring_per_dimension"),
        (get_topology("dgx-h100"), "all_reduce", "double_binary_tree"),
        (get_topology("h100-cluster:2:4"), "all_reduce", "hierarchical"),
        (get_topology("pcie-8gpu"), "all_gather", "ring"),
        (fully_connected(6, 1e10, 2e-6), "all_to_all", "pairwise"),
        (fully_connected(8, 1e10, 2e-6), "reduce_scatter", "recursive_halving_doubling"),
        (get_topology("dgx-a100"), "broadcast", "ring"),
    ],
)
def test_price_plan_equals_pricing_the_schedule(topology, collective, algorithm):
    n = topology.num_devices
    spec = make_spec(collective, algorithm, n, 3000 * n, nbytes=4 * 3000 * n, topology=topology)
    plan = build_plan(spec)
    assert price_plan(plan, topology, None, 4) == price(plan.to_schedule(4), topology)


def test_price_plan_on_a_subset_of_devices_in_rank_order():
    topology = get_topology("dgx-h100")
    spec = make_spec("all_reduce", "ring", 4, 4096, nbytes=4096 * 4)
    plan = build_plan(spec)
    ranks = [7, 2, 5, 0]
    assert price_plan(plan, topology, ranks, 4) == price(plan.to_schedule(4), topology, ranks)
