"""The NCCL-like selector: size and topology rules, explicit and environment overrides."""

from __future__ import annotations

import pytest

from simdist.collectives import select_algorithm
from simdist.collectives.selector import ENV_VAR, SMALL_MAX_BYTES, TREE_MAX_BYTES
from simdist.topology.model import Device, Switch, Topology


def topo(num: int, hosts: int = 1, switch: bool = False, dims: tuple = ()) -> Topology:
    per_host = num // hosts
    devices = tuple(
        Device(f"d{i}", "GPU", {"float32": 1e12}, 1e12, 2**34, host=i // per_host)
        for i in range(num)
    )
    switches = (Switch("sw"),) if switch else ()
    return Topology("t", devices, switches, (), torus_dims=dims)


@pytest.fixture(autouse=True)
def no_env(simdist_env):
    simdist_env(ENV_VAR, None)


def test_single_switch_small_direct_large_ring():
    t = topo(8, switch=True)
    assert select_algorithm("all_reduce", 8 * 1024, t) == "direct"
    assert select_algorithm("all_reduce", SMALL_MAX_BYTES + 1, t) == "ring"
    assert select_algorithm("broadcast", 2**30, t) == "direct"
    assert select_algorithm("all_to_all", 2**30, t) == "direct"


def test_no_topology_latency_then_bandwidth():
    assert select_algorithm("all_reduce", 1024, num_ranks=8) == "recursive_doubling"
    assert select_algorithm("reduce_scatter", 1024, num_ranks=8) == "recursive_halving_doubling"
    assert select_algorithm("all_reduce", 2**30, num_ranks=8) == "ring"
    assert select_algorithm("reduce", 2**30, num_ranks=8) == "recursive_doubling"
    assert select_algorithm("all_to_all", 2**30, num_ranks=8) == "pairwise"
    assert select_algorithm("all_reduce", 2**30, num_ranks=1) == "ring"


def test_multi_host_tree_then_hierarchical():
    t = topo(16, hosts=2, switch=True)
    assert select_algorithm("all_reduce", TREE_MAX_BYTES - 1, t) == "double_binary_tree"
    assert select_algorithm("all_reduce", 2**30, t) == "hierarchical"
    assert select_algorithm("all_gather", 2**30, t) == "ring"


def test_torus_ring_per_dimension():
    t = topo(16, dims=(4, 4))
    for coll in ("all_reduce", "reduce_scatter", "all_gather"):
        assert select_algorithm(coll, 2**20, t) == "ring_per_dimension"


def test_overrides(simdist_env):
    assert select_algorithm("all_reduce", 2**30, num_ranks=4, algorithm="direct") == "direct"
    with pytest.raises(ValueError, match="does not apply to all_to_all"):
        select_algorithm("all_to_all", 1, num_ranks=4, algorithm="ring")
    simdist_env(ENV_VAR, "double_binary_tree")
    assert select_algorithm("all_reduce", 2**30, num_ranks=4) == "double_binary_tree"
    assert select_algorithm("all_gather", 2**30, num_ranks=4) == "ring"  # does not apply
    simdist_env(ENV_VAR, "all_gather=direct, all_reduce=ring")
    assert select_algorithm("all_gather", 2**30, num_ranks=4) == "direct"
    assert select_algorithm("all_reduce", 1, num_ranks=4) == "ring"
    simdist_env(ENV_VAR, "all_reduce=bogus")
    with pytest.raises(ValueError, match=ENV_VAR):
        select_algorithm("all_reduce", 1, num_ranks=4)
    simdist_env(ENV_VAR, "bogus")
    with pytest.raises(ValueError, match="unknown algorithm"):
        select_algorithm("all_reduce", 1, num_ranks=4)


def test_api_docstring_examples():
    import doctest

    from simdist.collectives import api

    assert doctest.testmod(api).failed == 0
