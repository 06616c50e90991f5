"""Presets: every preset builds, cites sources, and has the documented shape."""

import pytest

from simdist.topology import get_topology, list_topologies, tensorcores_per_chip, tpu_slice
from simdist.topology.tpu import TPU_SHAPES


@pytest.mark.parametrize("name", [n for n, _ in list_topologies()])
def test_every_listed_preset_builds_with_sources(name):
    topology = get_topology(name)
    assert topology.num_devices > 0
    assert topology.sources and all(isinstance(s, str) and s for s in topology.sources)
    assert all(link.bandwidth > 0 and link.latency >= 0 for link in topology.links)
    assert all(d.peak_flops and d.memory_bandwidth > 0 for d in topology.devices)


@pytest.mark.parametrize(
    "name, devices, hosts, dims",
    [
        ("dgx-h100", 8, 1, ()),
        ("dgx-a100", 8, 1, ()),
        ("pcie-8gpu", 8, 1, ()),
        ("h100-cluster:2", 16, 2, ()),
        ("h100-cluster:4", 32, 4, ()),
        ("a100-cluster:3:4", 24, 3, ()),
        ("dgx-h100-ib", 16, 2, ()),
        ("v3-8", 4, 1, (2, 2)),
        ("v3-32", 16, 4, (4, 4)),
        ("v4-32", 16, 4, (2, 2, 4)),
        ("v4-8192", 4096, 1024, (16, 16, 16)),
        ("v5p-128", 64, 16, (4, 4, 4)),
        ("v5litepod-16", 16, 2, (4, 4)),
        ("v5e-16", 16, 2, (4, 4)),
        ("V5E-256", 256, 32, (16, 16)),
    ],
)
def test_sizes(name, devices, hosts, dims):
    topology = get_topology(name)
    assert topology.num_devices == devices
    assert topology.num_hosts == hosts
    assert topology.torus_dims == dims


def test_dgx_h100_constants():
    topology = get_topology("dgx-h100")
    assert {link.bandwidth for link in topology.links} == {450e9}  # 900 GB/s bidirectional
    gpu = topology.devices[0]
    assert gpu.name == "node0/gpu0" and gpu.kind == "GPU"
    assert gpu.peak_flops["bfloat16"] == pytest.approx(989.5e12)
    assert gpu.memory_bandwidth == pytest.approx(3.35e12)


def test_cluster_nics():
    topology = get_topology("h100-cluster:2:4")
    ib = [link for link in topology.links if link.kind == "infiniband"]
    assert len(ib) == 2 * 4 * 2 and {link.bandwidth for link in ib} == {50e9}


def test_tpu_naming_rules():
    assert get_topology("v4-32").name == "v4-32"
    assert get_topology("v5e-16").name == "v5litepod-16"
    assert get_topology("v5p-128").devices[0].kind == "TPU"
    assert tensorcores_per_chip(get_topology("v4-32")) == 2
    assert tensorcores_per_chip(get_topology("v5e-8")) == 1
    assert tensorcores_per_chip(get_topology("v3-8")) == 2
    assert tensorcores_per_chip(get_topology("dgx-h100")) == 1


def test_tpu_wraparound_rules():
    assert get_topology("v4-32").torus_wraparound == (False, False, False)  # mesh
    assert get_topology("v4-128").torus_wraparound == (True, True, True)  # full cube
    assert get_topology("v5litepod-16").torus_wraparound == (True, True)
    assert tpu_slice("v5e", 16, wraparound=False).torus_wraparound == (False, False)


def test_tpu_host_counts_match_google_tables():
    # v5e: 2x4 = 1 host, 4x4 = 2, 4x8 = 4, 8x8 = 8 (Google's v5e slice table)
    for chips, hosts in [(8, 1), (16, 2), (32, 4), (64, 8)]:
        assert tpu_slice("v5e", chips).num_hosts == hosts
    for chips in TPU_SHAPES["v5p"]:
        if chips >= 4:
            assert tpu_slice("v5p", chips).num_hosts == chips // 4


@pytest.mark.parametrize(
    "name, match",
    [
        ("nope", "unknown topology 'nope'; valid names: pcie-8gpu"),
        ("v4-31", "multiple of 2"),
        ("v4-6", "no slice of 3 chips"),
        ("h100-cluster:0", "NODES must be a positive integer"),
        ("h100-cluster:2:3", "must divide"),
        ("h100-cluster:x", "NODES must be a positive integer"),
    ],
)
def test_bad_names(name, match):
    with pytest.raises(ValueError, match=match):
        get_topology(name)
