"""The channels NCCL launches for a call (enqueue.cc), and the executed time built on them."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist.cost import nccl_constants as C
from simdist.cost.nccl import NCCL_COLLECTIVES, nccl_estimate
from simdist.cost.nccl_launch import launched_channels
from simdist.topology import get_topology

KiB, MiB, GiB = 2**10, 2**20, 2**30


@pytest.mark.parametrize(
    ("algo", "proto", "nbytes", "expected"),
    [
        # ring LL: threadThreshold 8 * nRanks = 64 B/thread, 512 threads: nc = 64 KiB / 32 KiB
        ("ring", "LL", 64 * KiB, (2, 24)),
        ("ring", "LL", 1 * KiB, (1, 24)),
        # Simple: 64 B/thread * 512 threads: 256 KiB keeps 8 of 24 channels
        ("ring", "Simple", 256 * KiB, (8, 24)),
        ("ring", "Simple", 1 * GiB, (24, 24)),
        # NVLS keeps nvlsChannels (16 on Hopper); 64 KiB is 4 cells of 16 KiB
        ("nvls", "Simple", 64 * KiB, (4, 16)),
    ],
)
def test_channel_counts_follow_enqueue_cc_by_hand(algo, proto, nbytes, expected):
    assert launched_channels("all_reduce", algo, proto, nbytes, 8, 24, 16) == expected


@settings(max_examples=25, deadline=None)
@given(
    coll=st.sampled_from(NCCL_COLLECTIVES),
    algo=st.sampled_from(("ring", "tree", "nvls")),
    proto=st.sampled_from(C.PROTOCOLS),
    nbytes=st.integers(1, 2**34),
    ranks=st.integers(2, 72),
    comm=st.integers(1, 64),
)
def test_used_channels_are_between_one_and_launched(coll, algo, proto, nbytes, ranks, comm):
    used, launched = launched_channels(coll, algo, proto, nbytes, ranks, comm, 16)
    assert 1 <= used <= launched == (16 if algo == "nvls" else comm)


@pytest.mark.parametrize("preset", ["dgx-a100", "dgx-h100", "pcie-8gpu", "h100-cluster:2"])
def test_executed_time_is_the_model_time_when_every_channel_is_busy(preset):
    system = get_topology(preset).system
    for nbytes in (1 * KiB, 64 * KiB, 1 * MiB, 1 * GiB):
        est = nccl_estimate("all_reduce", nbytes, system)
        assert est.time >= est.model_time > 0
        assert est.model_time == est.candidates[0][2]  # NCCL chooses by its own model
        if est.channels_used == est.channels_launched:
            assert est.time == pytest.approx(est.model_time)
    big = nccl_estimate("all_reduce", GiB, system)
    assert big.channels_used == big.channels_launched
    small = nccl_estimate("all_reduce", KiB, system)
    assert small.channels_used == 1 and small.time > small.model_time


def test_fewer_channels_scale_the_per_channel_bandwidth_not_llmaxbw():
    from simdist.cost.nccl import _tune

    system = get_topology("dgx-a100").system
    tuning = _tune(system)
    linear, cap = tuning.per_channel["all_reduce", "ring", "LL"]
    # 24 channels: llMaxBw (87.7 GB/s on one Ampere node) binds the communicator
    assert cap == pytest.approx(87.7 * 8 / 14) and linear > cap
    assert tuning.bandwidth["all_reduce", "ring", "LL"] == pytest.approx(cap)
    est = nccl_estimate("all_reduce", 64 * KiB, system, protocol="LL", algorithm="ring")
    assert (est.channels_used, est.channels_launched) == (2, 24)
    # 2 channels of 10 GB/s each (half a 20 GB/s ring channel), LL at half: under the cap
    executed_bw = linear * 2 / 24
    assert executed_bw == pytest.approx(2 * 10 * 0.5 * 8 / 14) and executed_bw < cap
    latency = tuning.latency["all_reduce", "ring", "LL"]
    assert est.time == pytest.approx((latency + 64 * KiB / (1000 * executed_bw)) * 1e-6)


@pytest.mark.parametrize("preset", ["dgx-a100", "dgx-h100", "hgx-h200", "gb200-nvl72"])
def test_mid_sizes_launch_every_channel_so_time_is_nccls_model(preset):
    # the docs' claim for the 1-64 MiB band: no channel reduction there, nothing to add
    system = get_topology(preset).system
    ranks = 4 if preset == "gb200-nvl72" else 8
    for nbytes in (1 * MiB, 16 * MiB, 64 * MiB):
        est = nccl_estimate("all_reduce", nbytes, system, num_ranks=ranks)
        assert est.channels_used == est.channels_launched
        assert est.time == pytest.approx(est.model_time)
