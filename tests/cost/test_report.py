"""Tests for simdist.cost.report: nccl-tests columns, factors and size syntax."""

import pytest

from simdist.cost.report import bus_factor, parse_size, size_range


@pytest.mark.parametrize(
    "text, nbytes",
    [("8", 8), ("8K", 8192), ("8k", 8192), ("1M", 2**20), ("8G", 8 * 2**30), ("128m", 2**27)],
)
def test_parse_size_like_nccl_tests(text, nbytes):
    assert parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["", "8KB", "1.5M", "-8", "G", "8T"])
def test_parse_size_rejects_other_forms(text):
    with pytest.raises(ValueError, match="with an optional K, M or G suffix"):
        parse_size(text)


def test_size_range_multiplies_or_adds():
    assert size_range(8, 64, 2) == [8, 16, 32, 64]
    assert size_range(8, 100, 4) == [8, 32]
    assert size_range(10, 30, 1, 10) == [10, 20, 30]
    with pytest.raises(ValueError, match="larger than max"):
        size_range(64, 8, 2)
    with pytest.raises(ValueError, match="step factor"):
        size_range(8, 64, 1, 0)


@pytest.mark.parametrize(
    "collective, factor",
    [
        ("all_reduce", 2 * 7 / 8),
        ("reduce_scatter", 7 / 8),
        ("all_gather", 7 / 8),
        ("all_to_all", 7 / 8),
        ("broadcast", 1.0),
        ("reduce", 1.0),
    ],
)
def test_bus_factors_are_nccl_tests(collective, factor):
    assert bus_factor(collective, 8) == factor


def test_bus_factor_rejects_unknown_collective():
    with pytest.raises(ValueError, match="unknown collective 'gather'"):
        bus_factor("gather", 8)


def test_nccl_table_rows_follow_nccl_tests_rules():
    from simdist.cost import nccl_table
    from simdist.topology import get_topology

    topo = get_topology("dgx-a100")
    (ar,) = nccl_table("all_reduce", "ring", topo, [1000])
    assert (ar.size, ar.count, ar.type, ar.redop, ar.root) == (1000, 250, "float", "sum", -1)
    assert ar.algbw == pytest.approx(1000 / (ar.time_us * 1e-6) / 1e9)
    assert ar.busbw == pytest.approx(ar.algbw * 2 * 7 / 8)
    # all-gather sizes round down to a multiple of p elements; size is the gathered output
    (ag,) = nccl_table("all_gather", "ring", topo, [1000], dtype="float16")
    assert (ag.size, ag.count, ag.type, ag.redop) == (992, 496, "half", "none")
    assert ag.cost.nbytes == 992 // 8  # the schedule counts one rank's input
    (bc,) = nccl_table("broadcast", "ring", topo, [4096], root=3)
    assert bc.root == 3 and bc.busbw == pytest.approx(bc.algbw)


def test_nccl_table_rejects_bad_arguments():
    from simdist.cost import nccl_table
    from simdist.topology import get_topology

    topo = get_topology("dgx-a100")
    with pytest.raises(ValueError, match="unknown type"):
        nccl_table("all_reduce", "ring", topo, [8], dtype="float128")
    with pytest.raises(ValueError, match="num_ranks=9"):
        nccl_table("all_reduce", "ring", topo, [8], num_ranks=9)


def test_format_matches_nccl_tests_layout():
    from simdist.cost import format_nccl_table, nccl_table
    from simdist.topology import get_topology

    rows = nccl_table("all_reduce", "ring", get_topology("dgx-h100"), [8, 2**30])
    lines = format_nccl_table(rows).splitlines()
    assert lines[-1].startswith("# Avg bus bandwidth    : ")
    first = lines[-3]
    assert first[:12] == "           8" and first.split()[1:5] == ["2", "float", "sum", "-1"]
