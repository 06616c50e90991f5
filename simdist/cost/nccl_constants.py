"""NCCL's tuning constants, copied from one pinned NCCL release with file and line of each.

Pinned release: **NCCL v2.30.7-1** (tag ``v2.30.7-1``, commit
``73cf112295c33aee2b895f329f592f2a9b4b0f97`` of github.com/NVIDIA/nccl). Every number below is
NVIDIA's public constant at the line named beside it; none is fitted to a measurement.
Indices follow NCCL's: protocols ``LL, LL128, Simple``; GPU generations ``Volta, Ampere,
Hopper, Blackwell`` (compute capability < 80, 80-89, 90-99, >= 100); node-count column
``N1, N2, N4`` (1 node, 2 nodes, more). Bandwidths are GB/s (1e9 B/s), latencies microseconds.
"""

from __future__ import annotations

__all__ = ["NCCL_VERSION", "NCCL_COMMIT", "PROTOCOLS", "ALGORITHMS", "CITATIONS"]

NCCL_VERSION = "2.30.7-1"
NCCL_COMMIT = "73cf112295c33aee2b895f329f592f2a9b4b0f97"

PROTOCOLS = ("LL", "LL128", "Simple")
ALGORITHMS = ("tree", "ring", "nvls", "nvls_tree")  # the ones simdist models (CollNet, PAT: no)

# src/graph/tuning.cc:139-144 nvlsEfficiency (Volta, Ampere, Hopper, Blackwell)
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)

# src/graph/tuning.cc:149-155 baseLatencies[algorithm][protocol], us
BASE_LATENCY = {
    "tree": (6.8, 14.0, 8.4),  # tuning.cc:151
    "ring": (6.6, 14.0, 8.4),  # tuning.cc:151
    "nvls": (0.0, 0.0, 0.0),  # tuning.cc:153
    "nvls_tree": (0.0, 0.0, 0.0),  # tuning.cc:153
}

# src/graph/tuning.cc:156-176 hwLatencies[hardware][algorithm][protocol], us
HW_LATENCY = {
    "nvlink": {  # tuning.cc:158-163
        "tree": (0.6, 1.25, 4.0),
        "ring": (0.6, 1.9, 3.4),
        "nvls": (0.0, 0.0, 25.0),
        "nvls_tree": (0.0, 0.0, 25.0),
    },
    "pci": {  # tuning.cc:164-169
        "tree": (1.0, 1.9, 4.0),
        "ring": (1.0, 2.5, 5.7),
        "nvls": (0.0, 0.0, 0.0),
        "nvls_tree": (0.0, 0.0, 0.0),
    },
    "net": {  # tuning.cc:170-175
        "tree": (5.0, 8.5, 14.0),
        "ring": (2.7, 4.0, 14.0),
        "nvls": (0.0, 0.0, 18.0),
        "nvls_tree": (0.0, 0.0, 20.9),
    },
}

# src/graph/tuning.cc:177-183 llMaxBws[row][N1/N2/N4]; row = GPU generation on one node,
# row 0 (Intel and others) or 1 (AMD) across nodes (tuning.cc:268-271)
LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0))
# src/graph/tuning.cc:184-190 perChMaxRingLL128Bws[generation][N1/N2/N4]
PER_CH_MAX_RING_LL128_BW = (
    (20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (40.0, 40.0, 40.0),
)  # fmt: skip
# src/graph/tuning.cc:191-197 perChMaxTreeLL128Bws
PER_CH_MAX_TREE_LL128_BW = (
    (20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0), (55.6, 31.67, 20.0),
)  # fmt: skip
# src/graph/tuning.cc:198-204 perChMaxTreeBws
PER_CH_MAX_TREE_BW = (
    (26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0),
)  # fmt: skip
# src/graph/tuning.cc:205-211 perChMaxNVLSTreeBws
PER_CH_MAX_NVLS_TREE_BW = (
    (26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 80.0),
)  # fmt: skip

# Model refinements of ncclTopoTuneModel (src/graph/tuning.cc)
RING_LL_FACTOR = 0.5  # tuning.cc:327  busBw * .5, capped by llMaxBw
RING_LL128_FACTOR = 0.92  # tuning.cc:329  "120.0/128.0", capped by nCh * perChMaxRingLL128Bw
TREE_ALLREDUCE_FACTOR = 0.92  # tuning.cc:331  capped by nCh * perChMaxTreeBw
TREE_LL_FACTOR = 1.0 / 3.8  # tuning.cc:332  capped by llMaxBw
TREE_LL128_FACTOR = (7.0 / 9.0, 120.0 / 128.0)  # tuning.cc:335  (one node, more nodes)
TREE_ALGBW_RATIO = 0.5  # tuning.cc:380  tree bus -> algorithm bandwidth
NET_OVERHEAD_US = {"intel": 1.0, "amd": 2.0, "arm": 1.0}  # tuning.cc:228-233 getNetOverhead
NET_OVERHEAD_SIMPLE_FACTOR = 3  # tuning.cc:408
RING_PLATEAU_FACTOR = (1.9, 1.4)  # tuning.cc:649  (compute capability < 80, >= 80)
RING_PLATEAU_MIN_BYTES = 64  # tuning.cc:648  nBytes / (nChannels * nRanks) >= 64

# src/graph/tuning.cc:623-627 treeCorrectionFactor[protocol][log2(nBytes >> 6)], 64 B .. 256 MiB
TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
     1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
     1.0, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9,
     .9),
)  # fmt: skip

# Hardware bandwidths as NCCL's topology sees them (src/graph/topo.h)
NVLINK_BW = {60: 18.0, 70: 20.0, 80: 20.0, 86: 12.0, 90: 20.6, 100: 40.1}  # topo.h:19-24, 275-281
PCI_BW = 12.0  # topo.h:25  (PCI Gen3 x16; the Simple thread-count threshold, tuning.cc:240-241)
INTEL_P2P_OVERHEAD = 6 / 5  # topo.h:39  PCIe P2P through an Intel root complex costs bw * 6/5

# Channel search (src/graph/search.cc, src/init.cc, src/graph/connect.cc)
SPEED_INTRA = {  # search.cc:1051, 1057, 1063  single-node search speeds, GB/s per channel
    0: (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    90: (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
    100: (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
}
SPEED_INTER = {  # search.cc:1052-1053, 1058-1059, 1064-1065  multi-node search speeds
    0: (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0,
        2.4, 1.2, 0.24, 0.12),
    90: (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
         0.24, 0.12),
    100: (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
          6.0, 3.0, 2.4, 1.2, 0.24, 0.12),
}  # fmt: skip
SPEED_DROP_LIMIT = 0.49  # search.cc:1245  keep lowering speed while next / found > .49
MAXCHANNELS = 64  # src/include/device.h:91
RING_MAX_CHANNELS = MAXCHANNELS // 2  # src/init.cc:1177
NVLS_MAX_ARITY = 32  # src/include/device.h:213 NCCL_MAX_NVLS_ARITY (heads)
DUP_MIN_BW = 25.0  # search.cc:1039  no channel duplication below 25 GB/s
DUP_HOPPER_MIN_BW = 50.0  # search.cc:1040  cc > 80: none below 50 GB/s with > 4 channels
HOPPER_MULTINODE_DUP_BW = 45.0  # connect.cc:480  cc >= 90, > 1 node, bwIntra > 45: x2 channels

# Kernel launch shape (src/include/device.h, src/include/comm.h, src/enqueue.cc)
SIMPLE_MAX_THREADS = 512  # device.h:95 NCCL_SIMPLE_MAX_NTHREADS
LL_MAX_THREADS = 512  # device.h:97 NCCL_LL_MAX_NTHREADS
LL128_MAX_THREADS = 640  # device.h:114 NCCL_LL128_MAX_NTHREADS
THREAD_THRESHOLD = (8, 8, 64)  # comm.h:49-51 (LL, LL128, Simple) bytes per thread
NVLS_CHANNELS = {90: 16, 100: 24, "100-multinode": 32}  # src/transport/nvls.cc:155-157, 209-213
MIN_TRAFFIC_PER_CHANNEL = 32 << 10  # enqueue.cc:585 MinTrafficPerChannel, bytes of traffic

CITATIONS = (
    f"NCCL v{NCCL_VERSION} (github.com/NVIDIA/nccl tag v{NCCL_VERSION}, commit {NCCL_COMMIT}): "
    "src/graph/tuning.cc (ncclTopoTuneModel, ncclTopoGetAlgoTime, the constant tables at "
    "lines 139-211), src/graph/search.cc (speed lists 1051-1065, ncclTopoCompute, "
    "ncclTopoDupChannels), src/graph/topo.h (NVLink and PCI bandwidths 17-35), "
    "src/graph/topo.cc (PCIe and NIC bandwidth rules 545-657, 416-418), src/init.cc:1177, "
    "src/graph/connect.cc:460-482, src/enqueue.cc:91-101, 576-700, 2070-2110, "
    "src/transport/nvls.cc:155-213"
)
