"""Builders: link counts, symmetric bandwidth, names, hosts and the model helpers."""

import pytest

from simdist.topology import builders
from simdist.topology.hierarchy import multi_dim


def _symmetric(topology):
    pairs = {(link.src, link.dst): link for link in topology.links}
    for (a, b), link in pairs.items():
        back = pairs[(b, a)]
        assert back.bandwidth == link.bandwidth and back.latency == link.latency
    return True


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_fully_connected(n):
    topology = builders.fully_connected(n, 5e9, 2e-6)
    assert topology.num_devices == n
    assert len(topology.links) == n * (n - 1)
    assert _symmetric(topology)


@pytest.mark.parametrize("n, links", [(1, 0), (2, 2), (3, 6), (8, 16)])
def test_ring(n, links):
    topology = builders.ring(n, 5e9, 2e-6)
    assert len(topology.links) == links
    assert topology.torus_dims == (n,)
    assert _symmetric(topology)


def test_switch_star():
    topology = builders.switch(8, 1e9, 1e-6)
    assert len(topology.links) == 16 and len(topology.switches) == 1
    assert _symmetric(topology)


@pytest.mark.parametrize(
    "dims, wrap, links",
    [
        ((4, 4), True, 64),
        ((4, 4), False, 48),
        ((2, 2, 2), True, 24),
        ((4, 4, 4), True, 384),
        ((2, 2, 4), False, 56),
        ((3,), True, 6),
    ],
)
def test_torus_link_counts(dims, wrap, links):
    topology = builders.torus(dims, 1e9, 1e-6, wraparound=wrap)
    assert len(topology.links) == links
    assert topology.torus_dims == dims
    assert _symmetric(topology)
    assert len({(link.src, link.dst) for link in topology.links}) == len(topology.links)


def test_torus_coords_round_trip_and_row_major():
    topology = builders.torus((2, 3, 4), 1e9, 1e-6)
    assert topology.torus_coords(1) == (0, 0, 1)  # last dimension fastest
    assert topology.torus_coords(4) == (0, 1, 0)
    for rank in range(24):
        assert topology.torus_rank(topology.torus_coords(rank)) == rank
    assert topology.devices[5].name == "chip(0,1,1)"


def test_torus_hosts_by_block():
    topology = builders.torus((4, 4), 1e9, 1e-6, host_block=(2, 2))
    assert topology.num_hosts == 4
    assert topology.devices_on_host(0) == (0, 1, 4, 5)


def test_multi_node_shape():
    topology = builders.multi_node(
        3,
        8,
        nvlink_bandwidth=4.5e11,
        nvlink_latency=3e-7,
        nics_per_node=4,
        nic_bandwidth=5e10,
        nic_latency=8.5e-7,
        pcie_bandwidth=6.4e10,
        pcie_latency=5e-7,
    )
    assert topology.num_devices == 24 and topology.num_hosts == 3
    assert topology.hosts == (0, 1, 2)
    assert [d.host for d in topology.devices[8:16]] == [1] * 8
    assert len([s for s in topology.switches if s.kind == "nic"]) == 12
    assert _symmetric(topology)
    with pytest.raises(ValueError, match="must divide"):
        builders.multi_node(
            1,
            8,
            nvlink_bandwidth=1,
            nvlink_latency=0,
            nics_per_node=3,
            nic_bandwidth=1,
            nic_latency=0,
            pcie_bandwidth=1,
            pcie_latency=0,
        )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: builders.ring(0, 1e9, 0), "n must be an integer >= 1"),
        (lambda: builders.ring(4, 0, 0), "bandwidth must be a positive"),
        (lambda: builders.switch(4, 1e9, -1), "latency must be a non-negative"),
        (lambda: builders.torus((2, 2, 2, 2), 1e9, 0), "1 to 3 dimensions"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_helpers():
    topology = builders.switch(3, 1e9, 1e-6)
    assert topology.device_index("dev2") == 2
    assert topology.node_names == ("dev0", "dev1", "dev2", "switch")
    assert [link.dst for link in topology.links_from("switch")] == ["dev0", "dev1", "dev2"]
    assert topology.link_between("dev1", "switch").bandwidth == 1e9
    assert topology.link_between("dev1", "dev2") is None
    with pytest.raises(ValueError, match="not a torus"):
        topology.torus_coords(0)


def test_multi_dim_ring_ring_is_a_torus():
    topology = multi_dim(["Ring", "Ring"], [4, 8], [1e9, 2e9], [1e-6, 1e-6])
    assert topology.num_devices == 32 and topology.torus_dims == (8, 4)
    # npu1 is npu0's neighbour along ASTRA-sim's dimension 0 (the fastest)
    assert topology.link_between("npu0", "npu1").bandwidth == 1e9
    assert topology.link_between("npu0", "npu4").bandwidth == 2e9
    assert topology.torus_wraparound == (True, True)
