"""Tests for simdist.cost.network: the alpha-beta model with contention."""

import pytest

from simdist.collectives.schedule import Schedule, Transfer
from simdist.cost import price
from simdist.topology.model import Device, Link, Switch, Topology


def _device(name):
    return Device(name, "GPU", {"float32": 1e12}, 1e11, 2**30)


def _star(bandwidth=1e9, latency=1e-6):
    """a, b -> switch -> c (and back)."""
    names = ("a", "b", "c")
    links = []
    for name in names:
        links.append(Link(name, "sw", bandwidth, latency))
        links.append(Link("sw", name, bandwidth, latency))
    return Topology("star", tuple(_device(n) for n in names), (Switch("sw"),), tuple(links))


def _one_step(*transfers, p=3, nbytes=0):
    return Schedule("all_to_all", "test", p, nbytes, (tuple(transfers),))


def test_two_transfers_sharing_a_link_take_twice_the_transfer_time():
    topo = _star(bandwidth=1e9, latency=1e-6)
    alone = price(_one_step(Transfer(0, 2, 10**6)), topo)
    shared = price(_one_step(Transfer(0, 2, 10**6), Transfer(1, 2, 10**6)), topo)
    assert alone.time == pytest.approx(2e-6 + 1e-3, rel=1e-12)
    assert shared.time == pytest.approx(2e-6 + 2e-3, rel=1e-12)
    assert shared.bottleneck == Link("sw", "c", 1e9, 1e-6)
    assert dict((link.src + link.dst, b) for link, b in shared.link_bytes) == {
        "asw": 10**6,
        "bsw": 10**6,
        "swc": 2 * 10**6,
    }
    assert shared.bottleneck_busy == pytest.approx(2e-3)


def test_disjoint_transfers_do_not_contend_and_steps_add_up():
    topo = _star()
    schedule = Schedule(
        "all_to_all",
        "test",
        3,
        0,
        ((Transfer(0, 2, 10**6), Transfer(2, 1, 10**6)), (Transfer(1, 0, 5 * 10**5),)),
    )
    cost = price(schedule, topo)
    assert cost.step_times == pytest.approx((2e-6 + 1e-3, 2e-6 + 5e-4))
    assert cost.time == pytest.approx(sum(cost.step_times))


def test_zero_byte_and_self_transfers_cost_nothing():
    cost = price(_one_step(Transfer(0, 0, 100), Transfer(1, 2, 0)), _star())
    assert cost.time == 0.0 and cost.bottleneck is None and cost.link_bytes == ()


def test_ranks_map_schedule_ranks_to_devices():
    topo = _star()
    cost = price(_one_step(Transfer(0, 1, 10**6), p=2), topo, ranks=(2, 0))
    assert sorted((link.src, link.dst) for link, _ in cost.link_bytes) == [("c", "sw"), ("sw", "a")]


@pytest.mark.parametrize(
    "ranks, message",
    [((0,), "lists 1 devices"), ((0, 0), "distinct"), ((0, 5), "outside")],
)
def test_bad_ranks_raise(ranks, message):
    with pytest.raises(ValueError, match=message):
        price(_one_step(Transfer(0, 1, 8), p=2), _star(), ranks=ranks)


def test_more_ranks_than_devices_raises():
    with pytest.raises(ValueError, match="only 3 devices"):
        price(_one_step(Transfer(0, 1, 8), p=4), _star())


def test_ring_busbw_approaches_link_bandwidth_for_large_messages():
    from simdist.cost import nccl_table
    from simdist.topology import NOMINAL_DEVICE, ring

    topo = ring(8, 100e9, 1e-6, device=NOMINAL_DEVICE)
    small, large = nccl_table("all_reduce", "ring", topo, [8192, 2**32])
    assert large.busbw == pytest.approx(100.0, rel=1e-3)  # GB/s: the link's bandwidth
    assert small.busbw < 10.0


def test_ring_per_dimension_beats_a_flat_ring_on_a_torus():
    from simdist.cost import price_collective
    from simdist.topology import NOMINAL_DEVICE, torus

    topo = torus((4, 4), 50e9, 1e-6, device=NOMINAL_DEVICE)
    for nbytes in (2**12, 2**28):
        per_dim = price_collective("all_reduce", "ring_per_dimension", 16, nbytes, topo)
        flat = price_collective("all_reduce", "ring", 16, nbytes, topo)
        assert per_dim.time < flat.time


def test_price_collective_on_a_subset_of_devices_routes_on_the_whole_topology():
    from simdist.cost import price_collective
    from simdist.topology import get_topology

    topo = get_topology("dgx-h100")
    cost = price_collective("all_reduce", "ring", 4, 2**20, topo)
    assert cost.num_ranks == 4 and cost.topology == "dgx-h100"
    used = {link.src for link, _ in cost.link_bytes} | {link.dst for link, _ in cost.link_bytes}
    assert used == {f"node0/gpu{i}" for i in range(4)} | {"node0/nvswitch"}
