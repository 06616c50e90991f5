"""GPU presets: DGX A100 / H100, an 8-GPU PCIe box, and InfiniBand clusters of DGX nodes.

Every constant comes from a public specification named in the preset's ``sources``. Where a
number is not published (per-hop latencies), the source line says so and gives the basis of
the assumption. Units: decimal GB/s and TFLOPS as vendors print them (1 GB/s = 1e9 B/s);
"GB"/"GiB" of memory as printed, taken as GiB (2**30 B) because HBM stacks are binary-sized.
Vendors quote NVLink and ICI bandwidth bidirectionally; a :class:`Link` holds one direction,
so those figures are halved. Dense (non-sparse) tensor throughput is used throughout.

Single-node presets name GPUs ``"node0/gpu{i}"`` like the clusters do.
"""

from __future__ import annotations

import dataclasses

from simdist.topology import builders
from simdist.topology.model import Device, Topology

__all__ = [
    "A100_SXM",
    "A100_PCIE",
    "H100_SXM",
    "pcie_8gpu",
    "dgx_a100",
    "dgx_h100",
    "a100_cluster",
    "h100_cluster",
]

GB = 1e9
GiB = 2**30
TFLOPS = 1e12
US = 1e-6

# ---------------------------------------------------------------- GPU devices and links --

_SRC_A100 = (
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/a100, 80GB SXM / 80GB PCIe): "
    "FP64 9.7 TFLOPS, FP64 Tensor Core 19.5, FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS dense "
    "(624 with sparsity), INT8 624 TOPS; 80GB HBM2e at 2,039 GB/s (SXM) / 1,935 GB/s (PCIe); "
    "NVLink 600 GB/s bidirectional per GPU (300 GB/s per direction); PCIe Gen4 64 GB/s "
    "bidirectional (32 GB/s per direction)"
)
_SRC_H100 = (
    "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/h100, H100 SXM): FP64 34 TFLOPS, FP64 "
    "Tensor Core 67, FP32 67, TF32 989, BF16/FP16 1,979, FP8 3,958 TFLOPS with sparsity "
    "(halved here: dense TF32 494.5, BF16/FP16 989.5, FP8 1,979); 80GB HBM3 at 3.35 TB/s; "
    "NVLink 900 GB/s bidirectional per GPU (450 GB/s per direction); PCIe Gen5 128 GB/s "
    "bidirectional (64 GB/s per direction)"
)
_SRC_NVLINK_LAT = (
    "Latency (not published by NVIDIA; assumption): 0.6 us per GPU-to-GPU NVLink step, the "
    "LL-protocol ring hardware latency in NCCL's tuning model (src/graph/tuning.cc, hwLat "
    "NVLINK); split as 0.3 us per link, GPU->NVSwitch->GPU"
)
_SRC_PCIE_LAT = (
    "Latency (assumption): 1.0 us per GPU-to-GPU PCIe step, NCCL's tuning model hwLat PCI "
    "(ring, LL); split as 0.5 us per PCIe link"
)
_SRC_NET_LAT = (
    "Latency (assumption): 2.7 us per inter-node step, NCCL's tuning model hwLat NET (ring, "
    "LL); split as 0.5 us per GPU<->NIC PCIe link and 0.85 us per NIC<->switch link"
)
_SRC_SWITCH_MODEL = (
    "Model: a node's NVSwitch chips are one non-blocking switch; each GPU's link to it carries "
    "the GPU's total NVLink bandwidth per direction"
)
_SRC_IB_FABRIC = (
    "Model: the InfiniBand fabric is one non-blocking switch (a full-bisection fat tree), "
    "not a rail-optimised fabric"
)

A100_SXM = Device(
    name="",
    kind="GPU",
    peak_flops={
        "float64": 19.5 * TFLOPS,
        "float32": 19.5 * TFLOPS,
        "tfloat32": 156 * TFLOPS,
        "bfloat16": 312 * TFLOPS,
        "float16": 312 * TFLOPS,
        "int8": 624 * TFLOPS,
    },
    memory_bandwidth=2039 * GB,
    memory_bytes=80 * GiB,
)
A100_PCIE = dataclasses.replace(A100_SXM, memory_bandwidth=1935 * GB)
H100_SXM = Device(
    name="",
    kind="GPU",
    peak_flops={
        "float64": 67 * TFLOPS,
        "float32": 67 * TFLOPS,
        "tfloat32": 494.5 * TFLOPS,
        "bfloat16": 989.5 * TFLOPS,
        "float16": 989.5 * TFLOPS,
        "float8": 1979 * TFLOPS,
        "int8": 1979 * TFLOPS,
    },
    memory_bandwidth=3350 * GB,
    memory_bytes=80 * GiB,
)

NVLINK3_PER_DIRECTION = 300 * GB  # A100: 600 GB/s bidirectional
NVLINK4_PER_DIRECTION = 450 * GB  # H100: 900 GB/s bidirectional
PCIE4_X16_PER_DIRECTION = 32 * GB
PCIE5_X16_PER_DIRECTION = 64 * GB
HDR_200G = 200e9 / 8  # ConnectX-6 HDR 200 Gb/s: 25 GB/s per direction
NDR_400G = 400e9 / 8  # ConnectX-7 NDR 400 Gb/s: 50 GB/s per direction
NVLINK_LINK_LATENCY = 0.3 * US
PCIE_LINK_LATENCY = 0.5 * US
IB_LINK_LATENCY = 0.85 * US


def pcie_8gpu() -> Topology:
    """8x A100 80GB PCIe in one host: two PCIe Gen4 switches of 4 GPUs under one CPU."""
    return builders.pcie_tree(
        8,
        4,
        PCIE4_X16_PER_DIRECTION,
        PCIE_LINK_LATENCY,
        device=A100_PCIE,
        name="pcie-8gpu",
        sources=(
            _SRC_A100,
            "Model: a generic 8-GPU PCIe Gen4 server; GPUs 0-3 and 4-7 each behind one PCIe "
            "switch with a Gen4 x16 uplink (32 GB/s per direction) to the CPU root complex; "
            "no NVLink bridges",
            _SRC_PCIE_LAT,
        ),
    )


def dgx_a100() -> Topology:
    """NVIDIA DGX A100: 8x A100 SXM4 80GB on six NVSwitches (NVLink 3)."""
    return builders.switch(
        8,
        NVLINK3_PER_DIRECTION,
        NVLINK_LINK_LATENCY,
        device=A100_SXM,
        name="dgx-a100",
        kind="nvlink",
        switch_name="node0/nvswitch",
        sources=(
            "NVIDIA DGX A100 datasheet: 8x NVIDIA A100 80GB Tensor Core GPUs, 6x NVSwitch, "
            "600 GB/s GPU-to-GPU bidirectional bandwidth",
            _SRC_A100,
            _SRC_SWITCH_MODEL,
            _SRC_NVLINK_LAT,
        ),
        device_prefix="node0/gpu",
    )


def dgx_h100() -> Topology:
    """NVIDIA DGX H100: 8x H100 SXM5 80GB on four NVSwitches (NVLink 4)."""
    return builders.switch(
        8,
        NVLINK4_PER_DIRECTION,
        NVLINK_LINK_LATENCY,
        device=H100_SXM,
        name="dgx-h100",
        kind="nvlink",
        switch_name="node0/nvswitch",
        sources=(
            "NVIDIA DGX H100 datasheet: 8x NVIDIA H100 Tensor Core GPUs (80GB), 4x "
            "NVSwitch, 900 GB/s GPU-to-GPU bidirectional bandwidth (18 NVLink 4 links)",
            _SRC_H100,
            _SRC_SWITCH_MODEL,
            _SRC_NVLINK_LAT,
        ),
        device_prefix="node0/gpu",
    )


def a100_cluster(nodes: int = 2, nics_per_node: int = 8) -> Topology:
    """``nodes`` DGX A100 nodes over HDR InfiniBand (ConnectX-6, 200 Gb/s per NIC)."""
    return builders.multi_node(
        nodes,
        8,
        nvlink_bandwidth=NVLINK3_PER_DIRECTION,
        nvlink_latency=NVLINK_LINK_LATENCY,
        nics_per_node=nics_per_node,
        nic_bandwidth=HDR_200G,
        nic_latency=IB_LINK_LATENCY,
        pcie_bandwidth=PCIE4_X16_PER_DIRECTION,
        pcie_latency=PCIE_LINK_LATENCY,
        device=A100_SXM,
        name=f"a100-cluster:{nodes}:{nics_per_node}",
        sources=(
            "NVIDIA DGX A100 datasheet: 8x A100 80GB, 6x NVSwitch, 8x single-port Mellanox "
            "ConnectX-6 VPI 200 Gb/s HDR InfiniBand for compute (25 GB/s per direction each)",
            _SRC_A100,
            _SRC_SWITCH_MODEL,
            "GPU<->NIC over PCIe Gen4 x16 (32 GB/s per direction)",
            _SRC_IB_FABRIC,
            _SRC_NVLINK_LAT,
            _SRC_NET_LAT,
        ),
    )


def h100_cluster(nodes: int = 2, nics_per_node: int = 8) -> Topology:
    """``nodes`` DGX H100 nodes over NDR InfiniBand (ConnectX-7, 400 Gb/s per NIC)."""
    return builders.multi_node(
        nodes,
        8,
        nvlink_bandwidth=NVLINK4_PER_DIRECTION,
        nvlink_latency=NVLINK_LINK_LATENCY,
        nics_per_node=nics_per_node,
        nic_bandwidth=NDR_400G,
        nic_latency=IB_LINK_LATENCY,
        pcie_bandwidth=PCIE5_X16_PER_DIRECTION,
        pcie_latency=PCIE_LINK_LATENCY,
        device=H100_SXM,
        name=f"h100-cluster:{nodes}:{nics_per_node}",
        sources=(
            "NVIDIA DGX H100 datasheet: 8x H100 80GB, 4x NVSwitch, 8x single-port ConnectX-7 "
            "VPI, 400 Gb/s NDR InfiniBand for compute (50 GB/s per direction each)",
            _SRC_H100,
            _SRC_SWITCH_MODEL,
            "GPU<->NIC over PCIe Gen5 x16 (64 GB/s per direction)",
            _SRC_IB_FABRIC,
            _SRC_NVLINK_LAT,
            _SRC_NET_LAT,
        ),
    )
