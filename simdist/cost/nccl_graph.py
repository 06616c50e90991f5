"""NCCL's channel search, on the link budgets of a :class:`~simdist.topology.GpuSystem`.

NCCL builds its rings, trees and NVLS heads by searching the machine's graph
(``ncclTopoCompute``, NCCL v2.30.7-1 ``src/graph/search.cc:1072-1300``): at a per-channel
speed taken from a fixed list it adds channels until a link runs out of bandwidth, and it
walks the list by fixed rules. The result is a channel count and a per-channel bandwidth
inside (``bwIntra``) and across nodes (``bwInter``), which the tuning model then prices
(:mod:`simdist.cost.nccl`). simdist runs the same walk; only the question "do ``n``
channels fit at this speed" is answered from the system's symmetric link budgets instead of
NCCL's recursive path-following. Budgets, per direction:

* **NVSwitch node**: each GPU's NVLink bandwidth to the switches,
  ``nvlinks * NVLINK_BW[cc]`` (``topo.cc:830-857`` joins a GPU's links to one NVSwitch node).
  A ring or tree channel crosses every GPU's link once (multi-node rings: every GPU but the
  one leaving the node, ``ceil`` spread); an NVLS head channel loads its head twice and
  every other GPU once (``search.cc:410-440``), so ``k`` heads need ``(k + 1) * speed``.
* **PCIe-only node**: the GPU and switch-uplink PCIe links (``width * speed / 80`` GB/s); a
  ring crossing the CPU pays NCCL's Intel P2P overhead ``6/5`` (``topo.h:39``,
  ``search.cc:100-108``).
* **Network**: each NIC's path ``min(PCIe, NIC)``; ring channels spread over the NICs, an
  NVLS head takes one NIC.

The walk (``search.cc:1162-1287``): start at the first speed ``<= maxBw`` (the best GPU->GPU
or GPU->NIC path) with ``speed * minChannels <= totalBw``; stop at a perfect graph
(``maxChannels``) or when ``nChannels * bw >= totalBw``; else keep lowering the speed while
``next / best > 0.49``; keep the graph with most ``nChannels * bw``. Then duplicate channels
(``ncclTopoDupChannels``, ``search.cc:1036-1048``) and try to raise the speed again (pass 2).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from simdist.cost import nccl_constants as C
from simdist.topology.system import GpuSystem

__all__ = ["NcclGraph", "search_graphs", "nvlink_bw"]

_EPS = 1e-3  # search.cc:69 SUB_ROUND works to 1e-3 GB/s


@dataclasses.dataclass(frozen=True)
class NcclGraph:
    """One searched graph: ``n_channels`` channels at ``bw_intra`` / ``bw_inter`` GB/s each."""

    pattern: str  # "ring", "tree" or "nvls"
    n_channels: int
    bw_intra: float
    bw_inter: float
    intra_hw: str  # "nvlink" or "pci": which hwLatencies row the intra-node steps use
    ll128_allowed: bool  # NVLink inside the node (path type <= NVB, tuning.cc:531)


def _generation_key(cc: int) -> int:
    return 100 if cc >= 100 else 90 if cc >= 90 else 0


def nvlink_bw(system: GpuSystem) -> float:
    """GB/s of one GPU's NVLinks together, per direction, as NCCL's topology counts them."""
    if system.nvlinks_per_gpu == 0:
        return 0.0
    keys = sorted(k for k in C.NVLINK_BW if k <= system.compute_capability)
    per_link = C.NVLINK_BW[keys[-1]] if keys else C.NVLINK_BW[80]
    return system.nvlinks_per_gpu * per_link


def _fits_factory(system: GpuSystem, pattern: str) -> Callable[[int, float, float], bool]:
    gpus = system.gpus_per_node
    nvl = nvlink_bw(system)
    pci = system.pcie_bw
    multi = system.nodes > 1
    nic_path = min(pci, system.nic_bw) if multi else 0.0
    nics = max(system.nics_per_node, 1)

    def fits(n: int, s_intra: float, s_inter: float) -> bool:
        if pattern == "nvls":
            if gpus > 1 and (n + 1) * s_intra > nvl + _EPS:
                return False
            return not multi or (n <= nics and s_inter <= nic_path + _EPS)
        if multi:
            if math.ceil(n / nics) * s_inter > nic_path + _EPS:
                return False
            crossing = n - n // gpus  # channels in which a GPU forwards over NVLink
            budget = nvl if system.nvswitch else pci
            return gpus == 1 or crossing * s_intra <= budget + _EPS
        if system.nvswitch:
            return n * s_intra <= nvl + _EPS
        crosses_cpu = 0 < system.gpus_per_pcie_switch < gpus
        factor = C.INTEL_P2P_OVERHEAD if crosses_cpu and system.cpu_vendor == "intel" else 1.0
        return n * s_intra * factor <= pci + _EPS

    return fits


def _most_channels(fits, s_intra: float, s_inter: float, max_ch: int) -> int:
    n = 0
    while n < max_ch and fits(n + 1, s_intra, s_inter):
        n += 1
    return n


def _search(system: GpuSystem, pattern: str, min_ch: int, max_ch: int):
    cc = system.compute_capability
    key = _generation_key(cc)
    multi = system.nodes > 1
    speeds = (C.SPEED_INTER if multi else C.SPEED_INTRA)[key]
    nvl = nvlink_bw(system)
    pci = system.pcie_bw
    total_bw = max(pci, nvl)  # search.cc:30-38 getTotalBw
    max_bw = min(pci, system.nic_bw) if multi else (nvl if system.nvswitch else pci)
    if pattern != "ring" and system.gpus_per_node > 1:
        total_bw *= system.gpus_per_node / (system.gpus_per_node - 1)  # search.cc:1168
    fits = _fits_factory(system, pattern)
    i = 0
    while (speeds[i] > max_bw or speeds[i] * min_ch > total_bw) and i < len(speeds) - 1:
        i += 1
    best = None  # (n, bw_intra, bw_inter)
    while True:  # pass 1
        s = speeds[i]
        n = _most_channels(fits, s, s, max_ch)
        if n >= min_ch and (best is None or n * s > best[0] * best[1] + 1e-9):
            best = (n, s, s)
        if best is not None and (best[0] == max_ch or best[0] * best[2] >= total_bw):
            break
        if i < len(speeds) - 1 and (best is None or speeds[i + 1] / best[2] > C.SPEED_DROP_LIMIT):
            i += 1
            continue
        break
    if best is None:
        return None
    n, bw_intra, bw_inter = best
    # ncclTopoDupChannels (search.cc:1036-1048)
    if pattern != "nvls" and bw_intra >= C.DUP_MIN_BW:
        if not (cc > 80 and bw_intra < C.DUP_HOPPER_MIN_BW and n > 4):
            dup = min(2 * n, max_ch)
            divisor = -(-dup // n)
            n, bw_intra, bw_inter = dup, bw_intra / divisor, bw_inter / divisor
    # pass 2 (search.cc:1265-1287): raise the speed while the channels still fit
    i = 0
    while speeds[i] > bw_inter and i < len(speeds) - 1:
        i += 1
    while i > 0:
        up = speeds[i - 1]
        if pattern == "ring":
            if _most_channels(fits, up, up, max_ch) < n:
                break
            bw_intra = bw_inter = up
        elif pattern == "nvls":
            if not (bw_inter < bw_intra * 2 and fits(n, bw_intra, up)):
                break
            bw_inter = up
        else:
            if not (bw_intra < bw_inter * 2 and fits(n, up, bw_inter)):
                break
            bw_intra = up
        i -= 1
    return n, bw_intra, bw_inter


def search_graphs(system: GpuSystem) -> dict[str, NcclGraph]:
    """The ring, tree and (where NVLink SHARP exists) NVLS graphs NCCL would search.

    Ring first (``minChannels`` 1, ``maxChannels`` 32, ``init.cc:1176-1177``); tree with
    exactly the ring's channel count (``init.cc:1184-1185``); NVLS with up to
    ``min(32, gpus)`` heads, all of them on one node (``search.cc:1124-1137``).
    """
    nvlink = system.nvswitch and system.nvlinks_per_gpu > 0
    intra_hw = "nvlink" if nvlink else "pci"
    graphs: dict[str, NcclGraph] = {}
    ring = _search(system, "ring", 1, C.RING_MAX_CHANNELS)
    if ring is None:  # search.cc:1289-1296 falls back to one channel at 0.1 GB/s
        ring = (1, 0.1, 0.1)
    graphs["ring"] = NcclGraph("ring", *ring, intra_hw, nvlink)
    tree = _search(system, "tree", ring[0], ring[0]) or ring
    graphs["tree"] = NcclGraph("tree", *tree, intra_hw, nvlink)
    if system.nvls and system.nvswitch and system.compute_capability >= 90:
        heads = min(C.NVLS_MAX_ARITY, system.gpus_per_node)
        nvls = _search(system, "nvls", 1 if system.nodes > 1 else heads, heads)
        if nvls is not None:
            graphs["nvls"] = NcclGraph("nvls", *nvls, intra_hw, nvlink)
    return graphs
