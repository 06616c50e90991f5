"""GPU presets as one table: each platform's device, links, network and NCCL system facts.

A row of :data:`PLATFORMS` (a :class:`GpuPlatform`) holds every constant of one machine with
its public source; :func:`gpu_box` and :func:`gpu_cluster` build any row into a topology, so
the presets differ only in their rows. Each topology carries two views of the same machine:
the link graph (datasheet bandwidths: what the schedule-level alpha-beta model prices) and a
:class:`~simdist.topology.system.GpuSystem` (what NCCL's own tuning model reads,
:mod:`simdist.cost.nccl`).

Units: decimal GB/s and TFLOPS as vendors print them (1 GB/s = 1e9 B/s); memory "GB" taken
as GiB (HBM stacks are binary-sized). Vendors quote NVLink bandwidth bidirectionally; a
:class:`~simdist.topology.model.Link` holds one direction, so those figures are halved. Dense
(non-sparse) tensor throughput is used throughout: a datasheet's "with sparsity" figure is
halved. Where a number is not published (per-hop latencies) the source says so.
"""

from __future__ import annotations

import dataclasses

from simdist.topology import builders
from simdist.topology.model import Device, Topology
from simdist.topology.system import GpuSystem

__all__ = ["GpuPlatform", "PLATFORMS", "gpu_box", "gpu_cluster"]

GB = 1e9
GiB = 2**30
TFLOPS = 1e12
US = 1e-6

PCIE_PER_DIRECTION = {4: 32 * GB, 5: 64 * GB}  # x16: 64 / 128 GB/s bidirectional
NVLINK_LINK_LATENCY = 0.3 * US
PCIE_LINK_LATENCY = 0.5 * US
NIC_LINK_LATENCY = 0.85 * US

_SRC_LATENCY = (
    "Latency (not published by NVIDIA; assumption): 0.6 us per GPU-to-GPU NVLink step and "
    "1.0 us per PCIe step, the LL ring hardware latencies of NCCL's tuning model (NCCL "
    "v2.30.7-1 src/graph/tuning.cc:158-166), split as 0.3 us per NVLink link and 0.5 us per "
    "PCIe link; 2.7 us per inter-node step (tuning.cc:170-171, NET ring LL) split as 0.5 us per "
    "GPU<->NIC PCIe link and 0.85 us per NIC<->fabric link"
)
_SRC_SWITCH_MODEL = (
    "Model: a node's NVSwitch chips are one non-blocking switch; each GPU's link to it carries "
    "the GPU's total NVLink bandwidth per direction"
)
_SRC_FABRIC = (
    "Model: the inter-node fabric is one non-blocking switch (a full-bisection fat tree), not "
    "a rail-optimised fabric"
)


def _flops(**tflops: float) -> dict:
    return {dtype: value * TFLOPS for dtype, value in tflops.items()}


@dataclasses.dataclass(frozen=True)
class GpuPlatform:
    """One GPU machine's constants (one row of :data:`PLATFORMS`)."""

    title: str
    device: Device
    device_source: str
    compute_capability: int
    nvlinks_per_gpu: int
    nvlink_per_direction: float  # bytes/s of one GPU's NVLinks together, one direction
    nvswitch: bool
    nvls: bool
    pcie_gen: int
    node_source: str
    gpus_per_node: int = 8
    gpus_per_pcie_switch: int = 0  # PCIe-only boxes
    nics_per_node: int = 8
    nic_gbps: float = 0.0
    network: str = "infiniband"
    cpu_vendor: str = "intel"

    def system(self, nodes: int, nics_per_node: int | None = None) -> GpuSystem:
        return GpuSystem(
            gpu=self.title,
            compute_capability=self.compute_capability,
            nodes=nodes,
            gpus_per_node=self.gpus_per_node,
            nvlinks_per_gpu=self.nvlinks_per_gpu,
            nvswitch=self.nvswitch,
            nvls=self.nvls,
            pcie_gen=self.pcie_gen,
            gpus_per_pcie_switch=self.gpus_per_pcie_switch,
            cpu_vendor=self.cpu_vendor,
            nics_per_node=self.nics_per_node if nics_per_node is None else nics_per_node,
            nic_gbps=self.nic_gbps,
            network=self.network,
            source=self.node_source,
        )


_A100_SXM = Device("", "GPU", _flops(float64=19.5, float32=19.5, tfloat32=156, bfloat16=312,
                                     float16=312, int8=624), 2039 * GB, 80 * GiB)  # fmt: skip
_A100_SRC = (
    "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM / PCIe): FP64 9.7, FP64 Tensor Core 19.5, "
    "FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS dense, INT8 624 TOPS; HBM2e 2,039 GB/s (SXM) / "
    "1,935 GB/s (PCIe); NVLink 600 GB/s bidirectional (12 NVLink 3 links); PCIe Gen4"
)
_H100_FLOPS = _flops(
    float64=67, float32=67, tfloat32=494.5, bfloat16=989.5, float16=989.5, float8=1979, int8=1979
)
_H100_SXM = Device("", "GPU", _H100_FLOPS, 3350 * GB, 80 * GiB)
_H100_SRC = (
    "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM): FP64 Tensor Core 67, FP32 67, TF32 989, "
    "BF16/FP16 1,979, FP8 3,958 TFLOPS with sparsity (halved: dense); 80GB HBM3 3.35 TB/s; "
    "NVLink 900 GB/s bidirectional (18 NVLink 4 links); PCIe Gen5 128 GB/s"
)
_H100_PCIE_FLOPS = _flops(
    float64=51, float32=51, tfloat32=378, bfloat16=756.5, float16=756.5, float8=1513, int8=1513
)
_H100_PCIE = Device("", "GPU", _H100_PCIE_FLOPS, 2000 * GB, 80 * GiB)
_H100_PCIE_SRC = (
    "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe): FP64 Tensor Core 51, FP32 51, TF32 756, "
    "BF16/FP16 1,513, FP8 3,026 TFLOPS with sparsity (halved: dense); 80GB HBM2e 2 TB/s; "
    "PCIe Gen5 128 GB/s"
)
_H200 = dataclasses.replace(_H100_SXM, memory_bandwidth=4800 * GB, memory_bytes=141 * GiB)
_H200_SRC = (
    "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM): the H100 SXM's tensor throughput "
    "(FP32 67, TF32 989, BF16/FP16 1,979, FP8 3,958 TFLOPS with sparsity); 141GB HBM3e at "
    "4.8 TB/s; NVLink 900 GB/s bidirectional; PCIe Gen5 128 GB/s"
)
_B200_FLOPS = _flops(
    float64=37, float32=75, tfloat32=1125, bfloat16=2250, float16=2250, float8=4500, int8=4500
)
_B200 = Device("", "GPU", _B200_FLOPS, 8000 * GB, 180 * GiB)
_B200_SRC = (
    "NVIDIA HGX B200 specifications (8 GPUs): FP64 296 TFLOPS, FP32 600 TFLOPS, TF32 18, "
    "BF16/FP16 36, FP8 72 PFLOPS with sparsity, 1.4 TB HBM3e at 64 TB/s, per GPU divided by 8 "
    "(tensor figures halved: dense); NVLink 5 1.8 TB/s bidirectional per GPU (18 links)"
)
_GB200_FLOPS = _flops(
    float64=40, float32=80, tfloat32=1250, bfloat16=2500, float16=2500, float8=5000, int8=5000
)
_GB200 = Device("", "GPU", _GB200_FLOPS, 8000 * GB, 186 * GiB)
_GB200_SRC = (
    "NVIDIA GB200 NVL72 specifications (72 GPUs): FP64 2,880 TFLOPS, FP32 5,760 TFLOPS, TF32 "
    "180, BF16/FP16 360, FP8 720 PFLOPS with sparsity, up to 13.4 TB HBM3e at 576 TB/s, per GPU "
    "divided by 72 (tensor figures halved: dense); fifth-generation NVLink 1.8 TB/s per GPU, "
    "one 72-GPU NVLink domain (130 TB/s)"
)

PLATFORMS: dict[str, GpuPlatform] = {
    "pcie-8gpu": GpuPlatform(
        "A100 80GB PCIe",
        dataclasses.replace(_A100_SXM, memory_bandwidth=1935 * GB),
        _A100_SRC,
        80,
        0,
        0.0,
        False,
        False,
        4,
        "Model: a generic 8-GPU PCIe Gen4 server; GPUs 0-3 and 4-7 each behind one PCIe switch "
        "with a Gen4 x16 uplink to one CPU root complex (Intel); no NVLink bridges",
        gpus_per_pcie_switch=4,
        nics_per_node=0,
    ),
    "pcie5-8gpu": GpuPlatform(
        "H100 80GB PCIe",
        _H100_PCIE,
        _H100_PCIE_SRC,
        90,
        0,
        0.0,
        False,
        False,
        5,
        "Model: a generic 8-GPU PCIe Gen5 server; GPUs 0-3 and 4-7 each behind one PCIe switch "
        "with a Gen5 x16 uplink to one CPU root complex (Intel); no NVLink bridges",
        gpus_per_pcie_switch=4,
        nics_per_node=0,
    ),
    "a100": GpuPlatform(
        "A100-SXM4-80GB",
        _A100_SXM,
        _A100_SRC,
        80,
        12,
        300 * GB,
        True,
        False,
        4,
        "NVIDIA DGX A100 datasheet: 8x A100 80GB, 6x NVSwitch, 600 GB/s GPU-to-GPU "
        "bidirectional, 8x single-port ConnectX-6 200 Gb/s HDR InfiniBand for compute, dual "
        "AMD EPYC 7742 CPUs",
        nic_gbps=200,
        cpu_vendor="amd",
    ),
    "h100": GpuPlatform(
        "H100-SXM5-80GB",
        _H100_SXM,
        _H100_SRC,
        90,
        18,
        450 * GB,
        True,
        True,
        5,
        "NVIDIA DGX H100 datasheet: 8x H100 80GB, 4x NVSwitch (NVLink SHARP), 900 GB/s "
        "GPU-to-GPU bidirectional, 8x ConnectX-7 400 Gb/s NDR InfiniBand for compute, dual "
        "Intel Xeon Platinum 8480C CPUs",
        nic_gbps=400,
    ),
    "h100-roce": GpuPlatform(
        "H100-SXM5-80GB",
        _H100_SXM,
        _H100_SRC,
        90,
        18,
        450 * GB,
        True,
        True,
        5,
        "Model: HGX H100 8-GPU nodes (4x NVSwitch, 900 GB/s GPU-to-GPU) with 8x ConnectX-7 "
        "400 Gb/s Ethernet (RoCE v2) NICs, one per GPU, Intel Xeon CPUs",
        nic_gbps=400,
        network="roce",
    ),
    "h200": GpuPlatform(
        "H200-SXM-141GB",
        _H200,
        _H200_SRC,
        90,
        18,
        450 * GB,
        True,
        True,
        5,
        "NVIDIA DGX H200 datasheet: 8x H200 141GB, 4x NVSwitch, 900 GB/s GPU-to-GPU "
        "bidirectional, 8x ConnectX-7 400 Gb/s InfiniBand/Ethernet for compute, dual Intel "
        "Xeon Platinum 8480C CPUs",
        nic_gbps=400,
    ),
    "b200": GpuPlatform(
        "B200-180GB",
        _B200,
        _B200_SRC,
        100,
        18,
        900 * GB,
        True,
        True,
        5,
        "NVIDIA DGX B200 datasheet: 8x B200, 2x NVSwitch (fifth-generation NVLink), 14.4 TB/s "
        "aggregate NVLink bandwidth, 8x ConnectX-7 400 Gb/s InfiniBand/Ethernet for compute "
        "(4x OSFP ports), dual Intel Xeon Platinum 8570 CPUs",
        nic_gbps=400,
    ),
    "gb200": GpuPlatform(
        "GB200-NVL72",
        _GB200,
        _GB200_SRC,
        100,
        18,
        900 * GB,
        True,
        True,
        5,
        "NVIDIA GB200 NVL72 specifications: 72 Blackwell GPUs and 36 Grace CPUs in one NVLink "
        "domain (NVLink Switch trays); ConnectX-7 400 Gb/s per GPU for the scale-out network. "
        "Model: one rack is one NCCL node (multi-node NVLink makes the rack one NVLink domain); "
        "the GPU<->NIC link is PCIe Gen5 x16",
        gpus_per_node=72,
        nics_per_node=72,
        nic_gbps=400,
        cpu_vendor="arm",
    ),
}


def _node_sources(platform: GpuPlatform) -> tuple[str, ...]:
    return (platform.node_source, platform.device_source, _SRC_SWITCH_MODEL, _SRC_LATENCY)


def gpu_box(key: str, name: str) -> Topology:
    """One node of platform ``key``: NVSwitch star, or the PCIe tree of a PCIe-only box."""
    platform = PLATFORMS[key]
    if not platform.nvswitch:
        topology = builders.pcie_tree(
            platform.gpus_per_node,
            platform.gpus_per_pcie_switch,
            PCIE_PER_DIRECTION[platform.pcie_gen],
            PCIE_LINK_LATENCY,
            device=platform.device,
            name=name,
            sources=(platform.node_source, platform.device_source, _SRC_LATENCY),
        )
    else:
        topology = builders.switch(
            platform.gpus_per_node,
            platform.nvlink_per_direction,
            NVLINK_LINK_LATENCY,
            device=platform.device,
            name=name,
            kind="nvlink",
            switch_name="node0/nvswitch",
            sources=_node_sources(platform),
            device_prefix="node0/gpu",
        )
    return dataclasses.replace(topology, system=platform.system(1))


def gpu_cluster(key: str, nodes: int, nics_per_node: int | None, name: str) -> Topology:
    """``nodes`` nodes of platform ``key`` over its network (one NIC link per GPU group)."""
    platform = PLATFORMS[key]
    nics = platform.nics_per_node if nics_per_node is None else nics_per_node
    topology = builders.multi_node(
        nodes,
        platform.gpus_per_node,
        nvlink_bandwidth=platform.nvlink_per_direction,
        nvlink_latency=NVLINK_LINK_LATENCY,
        nics_per_node=nics,
        nic_bandwidth=platform.nic_gbps * 1e9 / 8,
        nic_latency=NIC_LINK_LATENCY,
        pcie_bandwidth=PCIE_PER_DIRECTION[platform.pcie_gen],
        pcie_latency=PCIE_LINK_LATENCY,
        device=platform.device,
        name=name,
        network=platform.network,
        sources=(
            *_node_sources(platform),
            f"GPU<->NIC over PCIe Gen{platform.pcie_gen} x16; NIC line rate "
            f"{platform.nic_gbps:g} Gb/s ({platform.nic_gbps / 8:g} GB/s per direction)",
            _SRC_FABRIC,
        ),
    )
    return dataclasses.replace(topology, system=platform.system(nodes, nics))
