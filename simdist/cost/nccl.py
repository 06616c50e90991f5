"""NCCL's own performance model: the time NCCL predicts, and picks by, for each collective.

This is NCCL v2.30.7-1's ``ncclTopoTuneModel`` and ``ncclTopoGetAlgoTime``
(``src/graph/tuning.cc:243-439, 630-654``), run on the graphs of
:mod:`simdist.cost.nccl_graph`, with the constants of :mod:`simdist.cost.nccl_constants`.
For each collective, algorithm (ring, tree, NVLS, NVLS-tree) and protocol (LL, LL128,
Simple) it computes a bus bandwidth and a latency::

    busBw  = nChannels * bw                   (bw: the graph's per-channel speed; NVLS: times
                                               its efficiency, x2 for all-reduce, tuning.cc:308-322)
    busBw  = protocol and algorithm caps       (tuning.cc:326-336: LL x0.5, LL128 x0.92, ...)
    algBw  = busBw * nRanks / nsteps           (ring, NVLS; tree: x0.5; tuning.cc:376-382)
    lat    = base + intra/inter hardware latency per step (tuning.cc:384-432)
    time   = lat + nBytes / algBw              (tuning.cc:653, us with GB/s)

and the choice is the (algorithm, protocol) of least time (``topoGetAlgoInfo``,
``src/enqueue.cc:2028-2045``), as NCCL makes it when ``NCCL_ALGO``/``NCCL_PROTO`` are unset.
``nBytes`` is the whole buffer, as nccl-tests' ``size`` column (for all-gather the gathered
output). Not modelled: CollNet (SHARP in the network, needs its plugin), PAT (one GPU per
node), user tuner plugins, and all-to-all (NCCL runs it as point-to-point sends, outside
this model: simdist prices it with its schedule).
"""

from __future__ import annotations

import dataclasses
import functools
import math

from simdist.cost import nccl_constants as C
from simdist.cost.nccl_graph import NcclGraph, search_graphs
from simdist.cost.nccl_launch import launched_channels
from simdist.topology.system import GpuSystem

__all__ = ["NcclEstimate", "NCCL_COLLECTIVES", "nccl_estimate", "nccl_system_for"]

NCCL_COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce")
ALGORITHM_NAMES = {"tree": "Tree", "ring": "Ring", "nvls": "NVLS", "nvls_tree": "NVLSTree"}


@dataclasses.dataclass(frozen=True)
class NcclEstimate:
    """NCCL's predicted time of one collective call and the choice behind it.

    Attributes:
        time: seconds, on the channels NCCL launches for this size
            (:mod:`simdist.cost.nccl_launch`): its latency plus the bytes at
            ``channels_used / channels_launched`` of the per-channel bandwidth, under
            LL's cap on the whole communicator (``llMaxBw``).
        model_time: seconds NCCL's tuning model predicts (every channel busy); NCCL
            chooses by this.
        algorithm, protocol: the chosen pair (``"ring"``, ``"Simple"``...).
        latency_us, bandwidth: the pair's latency (us) and algorithm bandwidth (GB/s).
        n_channels: channels of the chosen algorithm's graph.
        channels_used, channels_launched: channels carrying data of this call, and the
            pair's maximum (``comm->nChannels`` or ``comm->nvlsChannels``).
        candidates: ``(algorithm, protocol, seconds)`` of every enabled pair by NCCL's
            model, fastest first.
    """

    collective: str
    nbytes: int
    num_ranks: int
    time: float
    algorithm: str
    protocol: str
    latency_us: float
    bandwidth: float
    n_channels: int
    candidates: tuple[tuple[str, str, float], ...]
    model_time: float = 0.0
    channels_used: int = 0
    channels_launched: int = 0


def _log2i(n: int) -> int:
    return n.bit_length() - 1 if n > 0 else -1


def _compcap_index(cc: int) -> int:
    return 3 if cc >= 100 else 2 if cc >= 90 else 1 if cc >= 80 else 0


@dataclasses.dataclass(frozen=True)
class _Tuning:
    system: GpuSystem
    graphs: dict
    bandwidth: dict  # (coll, algo, proto) -> algBw GB/s (0: disabled)
    per_channel: dict  # (coll, algo, proto) -> (algBw before llMaxBw, llMaxBw cap) GB/s
    latency: dict  # (coll, algo, proto) -> us
    comm_channels: int
    nvls_channels: int
    simple_ring_threads: int


def _nsteps(coll: str, n: int) -> int:
    if coll == "all_reduce":
        return 2 * (n - 1)
    if coll in ("reduce_scatter", "all_gather"):
        return n - 1
    return n


def _applies(coll: str, algo: str) -> bool:
    if coll in ("broadcast", "reduce"):
        return algo == "ring"  # tuning.cc:289
    if coll in ("reduce_scatter", "all_gather"):
        return algo in ("ring", "nvls")  # tuning.cc:290-292
    return True


@functools.lru_cache(maxsize=64)
def _tune(system: GpuSystem) -> _Tuning:
    graphs = search_graphs(system)
    nodes, n_ranks = system.nodes, system.num_gpus
    cci = _compcap_index(system.compute_capability)
    col = 0 if nodes == 1 else 1 if nodes == 2 else 2  # index2, tuning.cc:267
    row = cci if nodes == 1 else (1 if system.cpu_vendor == "amd" else 0)  # tuning.cc:269-271
    ll_max = C.LL_MAX_BW[row][col]
    tree_max = C.PER_CH_MAX_TREE_BW[cci][col]
    ring_ll128_max = C.PER_CH_MAX_RING_LL128_BW[cci][col]
    tree_ll128_max = C.PER_CH_MAX_TREE_LL128_BW[cci][col]
    nvls_tree_max = C.PER_CH_MAX_NVLS_TREE_BW[cci][col]
    ppn = n_ranks / nodes
    bandwidth, latency, per_channel = {}, {}, {}
    for coll in NCCL_COLLECTIVES:
        nsteps = _nsteps(coll, n_ranks)
        for algo in C.ALGORITHMS:
            if not _applies(coll, algo):
                continue
            graph: NcclGraph | None = graphs.get("nvls" if algo.startswith("nvls") else algo)
            if graph is None:
                continue
            for p, proto in enumerate(C.PROTOCOLS):
                if algo in ("nvls", "nvls_tree") and proto != "Simple":
                    continue
                bw = graph.bw_intra if nodes <= 2 else graph.bw_inter
                if algo in ("nvls", "nvls_tree"):
                    if graph.n_channels < 2:
                        continue
                    intra = (
                        graph.bw_intra * C.NVLS_EFFICIENCY[cci]
                        * (graph.n_channels - 1) / graph.n_channels
                    )  # fmt: skip
                    intra *= 2.0 if coll == "all_reduce" else (ppn - 1) / ppn
                    inter = graph.bw_inter * (2 if nodes <= 2 and algo == "nvls_tree" else 1)
                    bw = min(intra, inter, nvls_tree_max if algo == "nvls_tree" else math.inf)
                bus = graph.n_channels * bw
                cap = math.inf  # llMaxBw caps the whole communicator, not each channel
                if algo == "ring" and proto == "LL":
                    bus, cap = bus * C.RING_LL_FACTOR, ll_max
                if algo == "ring" and proto == "LL128":
                    bus = min(bus * C.RING_LL128_FACTOR, graph.n_channels * ring_ll128_max)
                if algo == "tree" and coll == "all_reduce":
                    bus = min(bus * C.TREE_ALLREDUCE_FACTOR, graph.n_channels * tree_max)
                if algo == "tree" and proto == "LL":
                    bus, cap = bus * C.TREE_LL_FACTOR, ll_max
                if algo == "tree" and proto == "LL128":
                    factor = C.TREE_LL128_FACTOR[0 if nodes == 1 else 1]
                    bus = min(bus * factor, graph.n_channels * tree_ll128_max)
                if algo == "nvls" and coll in ("all_gather", "reduce_scatter") and nodes > 1:
                    bus = 0.0  # needs CollNet (tuning.cc:353-374)
                if not (algo != "ring" and coll in ("all_gather", "reduce_scatter")):
                    ratio = n_ranks / nsteps if algo != "tree" else C.TREE_ALGBW_RATIO
                    bus *= ratio
                    cap *= ratio
                # enabling rules (tuning.cc:440-541)
                if proto == "LL128" and not graph.ll128_allowed:
                    bus = 0.0
                if algo == "nvls_tree" and nodes == 1:
                    bus = 0.0
                if algo == "nvls" and nodes > 1:
                    bus = 0.0  # NVLS across nodes needs CollNet (tuning.cc:502-504)
                lat = C.BASE_LATENCY[algo][p]
                intra_lat = C.HW_LATENCY[graph.intra_hw][algo][p]
                inter_lat = C.HW_LATENCY["net"]["tree" if ppn == 1 else algo][p]
                if algo == "ring":
                    step_lat = C.HW_LATENCY["net" if nodes > 1 else graph.intra_hw][algo][p]
                    if coll in ("broadcast", "reduce"):
                        lat += step_lat  # sameChannels rings (tuning.cc:394-396)
                    else:
                        overhead = 0.0
                        if nodes > 1:
                            overhead = C.NET_OVERHEAD_US[system.cpu_vendor]
                            if proto == "Simple":
                                overhead *= C.NET_OVERHEAD_SIMPLE_FACTOR
                        intra_lat = max(intra_lat, overhead)
                        inter_steps = (
                            0 if nodes == 1
                            else 2 * (nodes - 1) if coll == "all_reduce" else nodes - 1
                        )  # fmt: skip
                        lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat
                elif algo == "tree":
                    if coll == "all_reduce":
                        lat += 2 * ((ppn - 1) * intra_lat + _log2i(nodes) * inter_lat)
                elif algo == "nvls":
                    lat = intra_lat + (inter_lat if nodes > 1 else 0.0)
                else:  # nvls_tree
                    lat += intra_lat + 2 * _log2i(nodes) * inter_lat
                bandwidth[coll, algo, proto] = min(bus, cap)
                per_channel[coll, algo, proto] = (bus, cap)
                latency[coll, algo, proto] = lat
    ring, tree = graphs["ring"], graphs["tree"]
    channels = min(C.MAXCHANNELS, 2 * min(ring.n_channels, tree.n_channels))  # connect.cc:460
    if (
        system.compute_capability >= 90
        and nodes > 1
        and ring.bw_intra > C.HOPPER_MULTINODE_DUP_BW
        and channels < 16
    ):
        channels *= 2  # connect.cc:479-482
    if system.compute_capability >= 100:  # nvls.cc:209-213
        nvls_channels = C.NVLS_CHANNELS["100-multinode" if nodes > 1 else 100]
    else:
        nvls_channels = C.NVLS_CHANNELS[90]
    pci_ring = ring.bw_intra * ring.n_channels <= C.PCI_BW  # tuning.cc:244-245
    simple_threads = C.SIMPLE_MAX_THREADS // 2 if pci_ring else C.SIMPLE_MAX_THREADS
    return _Tuning(
        system, graphs, bandwidth, per_channel, latency, channels, nvls_channels, simple_threads
    )


def _algo_time(
    tuning: _Tuning, coll: str, algo: str, proto: str, nbytes: int, fraction: float = 1.0
) -> tuple[float, float] | None:
    """ncclTopoGetAlgoTime (tuning.cc:630-654): ``(latency us, GB/s)``, None when disabled.

    ``fraction``: the share of the pair's channels the call runs on; the per-channel part of
    the bandwidth scales with it, llMaxBw's cap on the communicator does not.
    """
    if tuning.bandwidth.get((coll, algo, proto), 0.0) <= 0:
        return None
    linear, cap = tuning.per_channel[coll, algo, proto]
    bw = min(linear * fraction, cap)
    lat = tuning.latency[coll, algo, proto]
    p = C.PROTOCOLS.index(proto)
    log_size = _log2i(nbytes >> 6)
    if algo == "tree" and coll == "all_reduce" and 0 <= log_size < 23:
        bw *= C.TREE_CORRECTION[p][log_size]
    system = tuning.system
    if (
        algo == "nvls_tree" and coll == "all_reduce" and 0 <= log_size < 24
        and system.compute_capability >= 100 and system.cpu_vendor in ("intel", "amd")
    ):  # fmt: skip
        bw *= C.TREE_CORRECTION[p][log_size]
    if (
        algo == "ring" and proto == "Simple" and system.nodes > 1 and coll == "all_reduce"
        and nbytes / (tuning.comm_channels * system.num_gpus) >= C.RING_PLATEAU_MIN_BYTES
    ):  # fmt: skip
        lat *= C.RING_PLATEAU_FACTOR[0 if system.compute_capability < 80 else 1]
    return lat, bw


def nccl_system_for(system: GpuSystem, num_ranks: int) -> GpuSystem:
    """The system NCCL sees when ``num_ranks`` GPUs take part (whole nodes, or part of one).

    Raises:
        ValueError: a rank count that is neither part of one node nor whole nodes.
    """
    gpn = system.gpus_per_node
    if isinstance(num_ranks, bool) or not isinstance(num_ranks, int) or num_ranks < 1:
        raise ValueError(f"num_ranks must be a positive integer, got {num_ranks!r}")
    if num_ranks > system.num_gpus:
        raise ValueError(f"{num_ranks} ranks do not fit the {system.num_gpus} GPUs of the system")
    if num_ranks <= gpn:
        return dataclasses.replace(system, nodes=1, gpus_per_node=num_ranks)
    if num_ranks % gpn:
        raise ValueError(
            f"NCCL's model needs whole nodes: {num_ranks} ranks are not a multiple of the "
            f"{gpn} GPUs per node; use a multiple of {gpn} or at most {gpn} ranks"
        )
    return system.with_nodes(num_ranks // gpn)


def nccl_estimate(
    collective: str,
    nbytes: int,
    system: GpuSystem,
    num_ranks: int | None = None,
    algorithm: str = "auto",
    protocol: str = "auto",
) -> NcclEstimate:
    """NCCL's predicted time for ``collective`` of ``nbytes`` on ``system``.

    Args:
        collective: one of :data:`NCCL_COLLECTIVES`.
        nbytes: the whole buffer in bytes (nccl-tests' ``size``).
        system: the machine (a GPU topology's ``system``).
        num_ranks: GPUs taking part (default: all); see :func:`nccl_system_for`.
        algorithm: ``"auto"`` (NCCL's choice) or one of ``ring``, ``tree``, ``nvls``,
            ``nvls_tree`` (as ``NCCL_ALGO``).
        protocol: ``"auto"`` or ``LL``, ``LL128``, ``Simple`` (as ``NCCL_PROTO``).

    Returns:
        An :class:`NcclEstimate`.

    Raises:
        ValueError: an unknown collective, algorithm or protocol, a bad size, or a pair
            that NCCL would not run on this system.
    """
    if collective not in NCCL_COLLECTIVES:
        raise ValueError(
            f"NCCL's tuning model prices {', '.join(NCCL_COLLECTIVES)}, not {collective!r}"
        )
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"nbytes must be a non-negative integer, got {nbytes!r}")
    if algorithm != "auto" and algorithm not in C.ALGORITHMS:
        raise ValueError(f"unknown NCCL algorithm {algorithm!r}; use auto or {C.ALGORITHMS}")
    if protocol != "auto" and protocol not in C.PROTOCOLS:
        raise ValueError(f"unknown NCCL protocol {protocol!r}; use auto or {C.PROTOCOLS}")
    ranks = system.num_gpus if num_ranks is None else num_ranks
    view = nccl_system_for(system, ranks)
    if ranks == 1 or nbytes == 0:
        return NcclEstimate(collective, nbytes, ranks, 0.0, "ring", "Simple", 0.0, 0.0, 0, ())
    tuning = _tune(view)
    candidates = []
    for algo in C.ALGORITHMS:
        for proto in C.PROTOCOLS:
            if algorithm not in ("auto", algo) or protocol not in ("auto", proto):
                continue
            priced = _algo_time(tuning, collective, algo, proto, nbytes)
            if priced is not None:
                lat, bw = priced
                candidates.append((algo, proto, (lat + nbytes / (1000 * bw)) * 1e-6))
    if not candidates:
        raise ValueError(
            f"NCCL would run no algorithm {algorithm!r} with protocol {protocol!r} for "
            f"{collective} on {view.gpu} x{view.num_gpus} ({view.nodes} node(s)); use auto"
        )
    candidates.sort(key=lambda c: c[2])  # stable: NCCL keeps the first of equal times
    algo, proto, seconds = candidates[0]
    graph = tuning.graphs["nvls" if algo.startswith("nvls") else algo]
    used, launched = launched_channels(
        collective, algo, proto, nbytes, view.num_gpus, tuning.comm_channels,
        tuning.nvls_channels, tuning.simple_ring_threads,
    )  # fmt: skip
    lat, bw = _algo_time(tuning, collective, algo, proto, nbytes, used / launched)
    executed = (lat + nbytes / (1000 * bw)) * 1e-6
    return NcclEstimate(
        collective=collective,
        nbytes=nbytes,
        num_ranks=ranks,
        time=executed,
        algorithm=algo,
        protocol=proto,
        latency_us=tuning.latency[collective, algo, proto],
        bandwidth=tuning.bandwidth[collective, algo, proto],
        n_channels=graph.n_channels,
        candidates=tuple(candidates),
        model_time=seconds,
        channels_used=used,
        channels_launched=launched,
    )
