"""Routing: valid contiguous shortest paths, deterministic ties, torus wraparound."""

from collections import deque

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdist.topology import builders, get_topology, route, route_ranks
from simdist.topology.model import Link, Topology


def _bfs_hops(topology, src, dst):
    dist = {src: 0}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        for link in topology.links_from(node):
            if link.dst not in dist:
                dist[link.dst] = dist[node] + 1
                queue.append(link.dst)
    return dist[dst]


def _check_path(topology, src, dst, path):
    assert path[0].src == src and path[-1].dst == dst
    for a, b in zip(path, path[1:], strict=False):
        assert a.dst == b.src
    assert all(link in topology.links for link in path)


@pytest.mark.parametrize(
    "name", ["pcie-8gpu", "dgx-h100", "h100-cluster:2:4", "v4-32", "v5litepod-16", "v3-8"]
)
def test_every_pair_is_a_valid_shortest_path(name):
    topology = get_topology(name)
    names = [d.name for d in topology.devices]
    for src in names:
        for dst in names:
            path = route(topology, src, dst)
            if src == dst:
                assert path == ()
                continue
            _check_path(topology, src, dst, path)
            assert len(path) == _bfs_hops(topology, src, dst)


def test_switch_paths_go_through_the_switch():
    topology = builders.switch(4, 1e9, 1e-6)
    path = route(topology, "dev0", "dev3")
    assert [(link.src, link.dst) for link in path] == [("dev0", "switch"), ("switch", "dev3")]


def test_pcie_cross_switch_goes_through_root_complex():
    topology = get_topology("pcie-8gpu")
    hops = [link.dst for link in route(topology, "node0/gpu1", "node0/gpu6")]
    assert hops == ["node0/pcie0", "node0/cpu", "node0/pcie1", "node0/gpu6"]
    assert len(route(topology, "node0/gpu0", "node0/gpu3")) == 2


def test_cluster_intra_node_uses_nvlink_inter_node_uses_ib():
    topology = get_topology("h100-cluster:2")
    assert {link.kind for link in route(topology, "node0/gpu0", "node0/gpu7")} == {"nvlink"}
    kinds = [link.kind for link in route(topology, "node0/gpu2", "node1/gpu5")]
    assert kinds == ["pcie", "infiniband", "infiniband", "pcie"]


def test_torus_wraparound_takes_the_short_way():
    topology = builders.torus((8,), 1e9, 1e-6)
    path = route_ranks(topology, 0, 7)
    assert len(path) == 1  # 0 -> 7 over the wraparound link, not 7 hops forward
    assert route_ranks(topology, 1, 6)[0].dst == "chip(0)"  # 1 -> 0 -> 7 -> 6
    tie = route_ranks(topology, 0, 4)  # 4 hops either way: the positive direction
    assert [link.dst for link in tie] == ["chip(1)", "chip(2)", "chip(3)", "chip(4)"]


def test_mesh_has_no_wraparound():
    topology = builders.torus((4, 4), 1e9, 1e-6, wraparound=False)
    assert topology.torus_wraparound == (False, False)
    assert len(route_ranks(topology, 0, 3)) == 3


def test_torus_is_dimension_ordered():
    topology = builders.torus((4, 4, 4), 1e9, 1e-6)
    src = topology.torus_rank((0, 0, 0))
    dst = topology.torus_rank((1, 3, 2))
    coords = [
        topology.torus_coords(topology.device_index(link.dst))
        for link in route_ranks(topology, src, dst)
    ]
    assert coords == [(1, 0, 0), (1, 3, 0), (1, 3, 1), (1, 3, 2)]


@given(st.integers(0, 63), st.integers(0, 63))
def test_torus_hops_are_the_wrapped_manhattan_distance(a, b):
    topology = get_topology("v5p-128")  # 4x4x4 with wraparound
    ca, cb = topology.torus_coords(a), topology.torus_coords(b)
    expected = sum(min((x - y) % 4, (y - x) % 4) for x, y in zip(ca, cb, strict=True))
    path = route_ranks(topology, a, b)
    assert len(path) == expected
    if path:
        _check_path(topology, topology.devices[a].name, topology.devices[b].name, path)


def test_ties_follow_link_order_not_ids():
    # Two equal-length paths a->x->b and a->y->b: the one whose first link comes first wins.
    dev = builders.NOMINAL_DEVICE
    import dataclasses

    devices = tuple(dataclasses.replace(dev, name=n) for n in ("a", "b"))
    from simdist.topology.model import Switch

    def build(order):
        links = [Link("a", s, 1e9, 0.0) for s in order] + [Link(s, "b", 1e9, 0.0) for s in "xy"]
        return Topology("t", devices, (Switch("x"), Switch("y")), tuple(links))

    assert route(build("xy"), "a", "b")[0].dst == "x"
    assert route(build("yx"), "a", "b")[0].dst == "y"


def test_routes_are_deterministic_and_cached():
    first = route(get_topology("h100-cluster:2"), "node0/gpu1", "node1/gpu3")
    second = route(get_topology("h100-cluster:2"), "node0/gpu1", "node1/gpu3")
    assert first == second
    topology = get_topology("dgx-h100")
    assert route(topology, "node0/gpu0", "node0/gpu1") is route(
        topology, "node0/gpu0", "node0/gpu1"
    )


def test_large_torus_routes_fast():
    import time

    topology = builders.torus((16, 16, 16), 1e9, 1e-6)
    start = time.perf_counter()
    for a in range(0, 4096, 37):
        for b in range(0, 4096, 101):
            route_ranks(topology, a, b)
    assert time.perf_counter() - start < 10.0


def test_unknown_device_and_unreachable():
    topology = get_topology("dgx-h100")
    with pytest.raises(ValueError, match="no device 'gpu9'"):
        route(topology, "node0/gpu0", "gpu9")
    dev = builders.NOMINAL_DEVICE
    import dataclasses

    devices = tuple(dataclasses.replace(dev, name=n) for n in ("a", "b"))
    lonely = Topology("t", devices, (), (Link("b", "a", 1e9, 0.0),))
    with pytest.raises(ValueError, match="no path"):
        route(lonely, "a", "b")
