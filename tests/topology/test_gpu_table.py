"""The GPU preset table: every row builds, carries its NCCL system, cites its sources."""

import pytest

from simdist.topology import get_topology
from simdist.topology.gpu import PLATFORMS
from simdist.topology.system import GpuSystem


@pytest.mark.parametrize(
    "name, gpus, nodes, cc, nvls",
    [
        ("pcie-8gpu", 8, 1, 80, False),
        ("pcie5-8gpu", 8, 1, 90, False),
        ("dgx-a100", 8, 1, 80, False),
        ("dgx-h100", 8, 1, 90, True),
        ("hgx-h200", 8, 1, 90, True),
        ("dgx-b200", 8, 1, 100, True),
        ("gb200-nvl72", 72, 1, 100, True),
        ("gb200-nvl72:2", 144, 2, 100, True),
        ("h100-roce-cluster:4", 32, 4, 90, True),
        ("h200-cluster:2", 16, 2, 90, True),
        ("b200-cluster:3", 24, 3, 100, True),
    ],
)
def test_gpu_presets_carry_their_system(name, gpus, nodes, cc, nvls):
    topology = get_topology(name)
    system = topology.system
    assert isinstance(system, GpuSystem)
    assert topology.num_devices == system.num_gpus == gpus and system.nodes == nodes
    assert system.compute_capability == cc and system.nvls == nvls
    assert topology.sources and all(topology.sources)


def test_h200_and_b200_rows_hold_their_datasheet_numbers():
    h200 = get_topology("hgx-h200").devices[0]
    assert h200.memory_bandwidth == 4.8e12 and h200.memory_bytes == 141 * 2**30
    b200 = get_topology("dgx-b200")
    assert {link.bandwidth for link in b200.links} == {900e9}
    assert b200.devices[0].peak_flops["bfloat16"] == 2250e12
    roce = get_topology("h100-roce-cluster:2")
    assert {link.kind for link in roce.links} >= {"roce"} and roce.system.network == "roce"


def test_presets_differ_only_in_their_rows():
    assert {"a100", "h100", "h200", "b200", "gb200", "pcie-8gpu", "pcie5-8gpu"} <= set(PLATFORMS)
    assert all(p.device_source and p.node_source for p in PLATFORMS.values())


def test_bad_systems_are_rejected():
    with pytest.raises(ValueError, match="pcie_gen"):
        GpuSystem("x", 90, 1, 8, 18, True, True, pcie_gen=7)
    with pytest.raises(ValueError, match="multi-node GpuSystem needs"):
        GpuSystem("x", 90, 2, 8, 18, True, True, pcie_gen=5)
    with pytest.raises(ValueError, match="cpu_vendor"):
        GpuSystem("x", 90, 1, 8, 18, True, True, pcie_gen=5, cpu_vendor="power")


def test_size_cap_and_its_lift():
    with pytest.raises(ValueError, match="more than the limit of 8192"):
        get_topology("h100-cluster:2000")
    assert get_topology("v4-8192").num_devices == 4096
    assert get_topology("h100-cluster:1100", max_devices=None).num_devices == 8800


def test_a_saved_gpu_preset_keeps_its_nccl_system(tmp_path):
    from simdist.topology import load_topology, save_topology

    for name in ("dgx-h100", "a100-cluster:2:4"):
        path = tmp_path / f"{name.replace(':', '_')}.json"
        save_topology(get_topology(name), path)
        assert load_topology(path).system == get_topology(name).system
    bad = tmp_path / "bad.json"
    text = (tmp_path / "dgx-h100.json").read_text().replace('"pcie_gen": 5', '"pcie_gen": 7')
    bad.write_text(text)
    with pytest.raises(ValueError, match="nccl_system: GpuSystem.pcie_gen must be one of"):
        load_topology(bad)
    text = (
        (tmp_path / "dgx-h100.json").read_text().replace('"gpus_per_node": 8', '"gpus_per_node": 4')
    )
    bad.write_text(text)
    with pytest.raises(ValueError, match="describes 4 GPUs"):
        load_topology(bad)
