"""NCCL's tuning model: cited constants, the channel search, the time formula, the choice."""

import ast
import inspect

import pytest

from simdist.cost import nccl_constants as C
from simdist.cost.nccl import _tune, nccl_estimate, nccl_system_for
from simdist.cost.nccl_graph import nvlink_bw, search_graphs
from simdist.cost.pricing import price_call
from simdist.topology import get_topology


def system(name):
    return get_topology(name).system


def test_every_constant_cites_an_nccl_file_and_line():
    source = inspect.getsource(C)
    lines = source.splitlines()
    uncited = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and node.targets[0].id.isupper():
            name = node.targets[0].id
            if name in ("NCCL_VERSION", "NCCL_COMMIT", "PROTOCOLS", "ALGORITHMS", "CITATIONS"):
                continue
            block = "\n".join(lines[node.lineno - 2 : node.end_lineno])
            if not any(f"{ext}:" in block for ext in (".cc", ".h")):
                uncited.append(name)
    assert uncited == []
    assert C.NCCL_VERSION in C.CITATIONS and C.NCCL_COMMIT in C.CITATIONS


def test_nvlink_bandwidth_follows_topo_h():
    assert nvlink_bw(system("dgx-a100")) == pytest.approx(12 * 20.0)
    assert nvlink_bw(system("dgx-h100")) == pytest.approx(18 * 20.6)
    assert nvlink_bw(system("dgx-b200")) == pytest.approx(18 * 40.1)
    assert nvlink_bw(system("pcie-8gpu")) == 0.0
    assert system("pcie5-8gpu").pcie_bw == 48.0 and system("pcie-8gpu").pcie_bw == 24.0
    assert system("h100-cluster:2").nic_bw == 50.0


@pytest.mark.parametrize(
    "name, pattern, expected",
    [
        # A100: 6 channels at 40 GB/s fill the 240 GB/s of NVLink, duplicated to 12 at 20
        ("dgx-a100", "ring", (12, 20.0, 20.0)),
        # H100: 6 x 60 found, duplicated (>= 50 GB/s) to 12 x 30; 40 would not fit 12
        ("dgx-h100", "ring", (12, 30.0, 30.0)),
        # NVLS on one node: all 8 heads; 9 x speed <= 370.8 gives 40, pass 2 raises bwInter
        ("dgx-h100", "nvls", (8, 40.0, 60.0)),
        # two nodes: one channel per NIC at the 48 GB/s GPU->NIC path, not duplicated
        ("h100-cluster:2", "ring", (8, 48.0, 48.0)),
        ("a100-cluster:2", "ring", (8, 24.0, 24.0)),
        # PCIe Gen4 through an Intel root complex: one channel at 20 (x 6/5 fits 24)
        ("pcie-8gpu", "ring", (1, 20.0, 20.0)),
    ],
)
def test_channel_search_follows_ncclTopoCompute(name, pattern, expected):
    graph = search_graphs(system(name))[pattern]
    assert (graph.n_channels, graph.bw_intra, graph.bw_inter) == expected


def test_tree_uses_the_rings_channel_count_and_nvls_needs_nvlink_sharp():
    for name in ("dgx-a100", "dgx-h100", "h100-cluster:4"):
        graphs = search_graphs(system(name))
        assert graphs["tree"].n_channels == graphs["ring"].n_channels
    assert "nvls" not in search_graphs(system("dgx-a100"))
    assert "nvls" in search_graphs(system("dgx-h100"))


def test_ring_latency_and_bandwidth_are_tuning_cc_formulas():
    tuning = _tune(system("dgx-a100"))
    # ring Simple all-reduce on 8 GPUs of one node: base 8.4 + 14 steps x 3.4 us (NVLink)
    assert tuning.latency["all_reduce", "ring", "Simple"] == pytest.approx(8.4 + 14 * 3.4)
    assert tuning.bandwidth["all_reduce", "ring", "Simple"] == pytest.approx(240 * 8 / 14)
    # LL: half the bus bandwidth, capped by llMaxBw (Ampere, one node: 87.7)
    assert tuning.bandwidth["all_reduce", "ring", "LL"] == pytest.approx(87.7 * 8 / 14)
    # LL128: x 0.92, capped by nChannels x perChMaxRingLL128Bw (12 x 20)
    assert tuning.bandwidth["all_reduce", "ring", "LL128"] == pytest.approx(240 * 0.92 * 8 / 14)
    # broadcast: nsteps = nRanks, one hop latency (same channels)
    assert tuning.latency["broadcast", "ring", "LL"] == pytest.approx(6.6 + 0.6)
    # NVLS on H100: 40 x 0.85 x 7/8 x 2 per channel x 8 channels, algbw = busbw x 8/14
    h100 = _tune(system("dgx-h100"))
    assert h100.bandwidth["all_reduce", "nvls", "Simple"] == pytest.approx(
        8 * 40 * 0.85 * 7 / 8 * 2 * 8 / 14
    )
    assert h100.latency["all_reduce", "nvls", "Simple"] == pytest.approx(25.0)


def test_time_is_latency_plus_bytes_over_bandwidth_and_the_fastest_pair_wins():
    est = nccl_estimate("all_reduce", 2**30, system("dgx-a100"))
    tuning = _tune(system("dgx-a100"))
    key = ("all_reduce", est.algorithm, est.protocol)
    assert est.time == pytest.approx(
        (tuning.latency[key] + 2**30 / (1000 * tuning.bandwidth[key])) * 1e-6
    )
    assert est.time == min(c[2] for c in est.candidates)
    assert (est.algorithm, est.protocol) == ("ring", "Simple")
    small = nccl_estimate("all_reduce", 1024, system("dgx-a100"))
    assert small.protocol == "LL"
    assert nccl_estimate("all_reduce", 2**30, system("dgx-h100")).algorithm == "nvls"
    assert nccl_estimate("all_reduce", 2**30, system("h100-cluster:2")).algorithm == "nvls_tree"


def test_forced_algorithm_and_protocol_and_their_errors():
    ring = nccl_estimate("all_reduce", 2**30, system("dgx-h100"), algorithm="ring")
    assert ring.algorithm == "ring"
    ll = nccl_estimate("all_reduce", 2**20, system("dgx-h100"), protocol="LL")
    assert ll.protocol == "LL"
    with pytest.raises(ValueError, match="would run no algorithm 'nvls_tree'"):
        nccl_estimate("all_reduce", 2**20, system("dgx-h100"), algorithm="nvls_tree")
    with pytest.raises(ValueError, match="unknown NCCL protocol"):
        nccl_estimate("all_reduce", 8, system("dgx-h100"), protocol="ll")
    with pytest.raises(ValueError, match="not 'all_to_all'"):
        nccl_estimate("all_to_all", 8, system("dgx-h100"))
    with pytest.raises(ValueError, match="LL128"):
        nccl_estimate("all_reduce", 8, system("pcie-8gpu"), protocol="LL128")


def test_rank_subsets_are_part_of_a_node_or_whole_nodes():
    cluster = system("h100-cluster:4")
    assert nccl_system_for(cluster, 4).nodes == 1 and nccl_system_for(cluster, 4).gpus_per_node == 4
    assert nccl_system_for(cluster, 16).nodes == 2
    with pytest.raises(ValueError, match="whole nodes"):
        nccl_system_for(cluster, 12)
    with pytest.raises(ValueError, match="do not fit"):
        nccl_system_for(cluster, 40)
    # auto falls back to the schedule model where NCCL's model does not apply
    topo = get_topology("h100-cluster:2")
    assert price_call("all_reduce", "auto", 12, 2**20, topo).model == "schedule"
    assert price_call("all_reduce", "auto", 16, 2**20, topo).model == "nccl"
    assert price_call("all_to_all", "auto", 16, 2**20, topo).model == "schedule"
    assert price_call("all_reduce", "auto", 16, 2**20, get_topology("v4-32")).model == "schedule"


def test_multi_node_ring_is_one_pipelined_ring_at_its_slowest_hop():
    # 2..8 nodes of 8 H100: the ring's large-message busbw is the NIC channel speed x channels,
    # not the sum of an intra-node and an inter-node phase
    for nodes in (2, 4, 8):
        est = nccl_estimate("all_reduce", 2**33, system(f"h100-cluster:{nodes}"), algorithm="ring")
        p = 8 * nodes
        busbw = 2**33 / est.time / 1e9 * 2 * (p - 1) / p
        assert 360 < busbw < 8 * 48  # 8 channels x 48 GB/s, less the latency term
