"""What NCCL's topology detection sees of a GPU machine: the inputs of its tuning model.

A :class:`GpuSystem` rides on a GPU :class:`~simdist.topology.model.Topology` (its ``system``
field) and holds the facts NCCL reads from the hardware when it builds its graph
(``src/graph/topo.cc``): the GPUs' compute capability (it picks the per-link NVLink speed and
the constant tables), how many NVLinks each GPU has and whether they end on NVSwitches,
the PCIe generation and width of the GPU and NIC links, the NICs' speed, the CPU vendor, and
the node count. The link graph of the topology is what the schedule-level alpha-beta model
prices; the system is what :mod:`simdist.cost.nccl` prices. Both come from one preset table
(:mod:`simdist.topology.gpu`), so they describe the same machine.

PCIe ``link_speed`` maps to NCCL's per-lane value in 100 Mb/s units (``kvDictPciGen`` in
``src/graph/topo.cc``) and a link's bandwidth is ``width * speed / 80`` GB/s; a NIC's is
``speed_mbps / 8000`` GB/s (both ``src/graph/topo.cc``, NCCL v2.30.7-1).
"""

from __future__ import annotations

import dataclasses

__all__ = ["GpuSystem", "PCIE_GEN_SPEED"]

# NCCL v2.30.7-1 src/graph/topo.cc:545-550 (kvDictPciGen): per-lane speed in 100 Mb/s units.
PCIE_GEN_SPEED = {1: 15, 2: 30, 3: 60, 4: 120, 5: 240, 6: 480}


@dataclasses.dataclass(frozen=True)
class GpuSystem:
    """One GPU machine (or cluster of identical nodes) as NCCL's tuning model reads it.

    Attributes:
        gpu: the GPU's product name (printed in reports).
        compute_capability: CUDA compute capability times ten (80 A100, 90 H100/H200,
            100 B200/GB200).
        nodes: how many nodes (NCCL's ``nNodes``: hosts, or NVLink domains for GB200 NVL72).
        gpus_per_node: GPUs in one node (NCCL's ``localRanks`` when every GPU takes part).
        nvlinks_per_gpu: NVLink links of one GPU (0: PCIe only).
        nvswitch: whether the NVLinks end on NVSwitches (all GPUs of the node reach each
            other at the GPU's whole NVLink bandwidth).
        nvls: whether NVSwitch multicast/reduction (NVLink SHARP) is present (Hopper and
            later NVSwitch systems).
        pcie_gen, pcie_lanes: the GPU's PCIe link.
        gpus_per_pcie_switch: on a PCIe-only box, GPUs behind one PCIe switch (GPUs on
            different switches talk through the CPU root complex).
        cpu_vendor: ``"intel"``, ``"amd"`` or ``"arm"`` (NCCL's network overhead and LL
            table row; NCCL treats Arm as it treats Intel there).
        nics_per_node: network adapters used for GPU traffic in each node.
        nic_gbps: each NIC's line rate in Gb/s (the ``speed`` NCCL reads, /1000).
        network: ``"infiniband"`` or ``"roce"`` (printed; NCCL's model prices them alike).
        source: where these facts come from.
    """

    gpu: str
    compute_capability: int
    nodes: int
    gpus_per_node: int
    nvlinks_per_gpu: int
    nvswitch: bool
    nvls: bool
    pcie_gen: int
    pcie_lanes: int = 16
    gpus_per_pcie_switch: int = 0
    cpu_vendor: str = "intel"
    nics_per_node: int = 0
    nic_gbps: float = 0.0
    network: str = "infiniband"
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("compute_capability", "nodes", "gpus_per_node", "pcie_lanes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"GpuSystem.{name} must be a positive integer, got {value!r}")
        if self.pcie_gen not in PCIE_GEN_SPEED:
            raise ValueError(
                f"GpuSystem.pcie_gen must be one of {sorted(PCIE_GEN_SPEED)}, got {self.pcie_gen!r}"
            )
        if self.cpu_vendor not in ("intel", "amd", "arm"):
            raise ValueError(
                f"GpuSystem.cpu_vendor must be 'intel', 'amd' or 'arm', got {self.cpu_vendor!r}"
            )
        if self.nodes > 1 and (self.nics_per_node < 1 or not self.nic_gbps > 0):
            raise ValueError("a multi-node GpuSystem needs nics_per_node >= 1 and nic_gbps > 0")

    @property
    def num_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def pcie_bw(self) -> float:
        """GB/s of the GPU's PCIe link as NCCL computes it (``width * speed / 80``)."""
        return self.pcie_lanes * PCIE_GEN_SPEED[self.pcie_gen] / 80.0

    @property
    def nic_bw(self) -> float:
        """GB/s of one NIC as NCCL computes it (``speed_mbps / 8000``)."""
        return self.nic_gbps * 1000 / 8000.0

    def with_nodes(self, nodes: int) -> GpuSystem:
        """The same machine with a different node count."""
        return dataclasses.replace(self, nodes=nodes)
