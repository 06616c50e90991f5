"""The channels NCCL really launches for one call, which its tuning model does not see.

NCCL picks an (algorithm, protocol) pair by the time its tuning model predicts with every
channel of the communicator busy (:mod:`simdist.cost.nccl`). It then launches fewer channels
for smaller messages, in two places (NCCL v2.30.7-1):

* ``topoGetAlgoInfo`` (``src/enqueue.cc:2070-2110``): for ring and tree, starting from the
  communicator's channel count, drop a channel while ``nBytes < nc * nt * threadThreshold``
  (``nt``: the pair's maximum threads, ``tuning.cc:244-256``; ``threadThreshold``: 8 bytes
  per thread for LL and LL128, 64 for Simple, ``comm.h:49-51``, ring LL times ``nRanks``,
  ``tuning.cc:589-593``). NVLS and NVLS-tree keep their ``nvlsChannels``
  (``enqueue.cc:2088-2094``, ``nvls.cc:155-157, 209-213``).
* ``scheduleCollTasksToPlan`` (``src/enqueue.cc:576-700``): the message is cut into cells
  of ``32 KiB`` of traffic (``MinTrafficPerChannel``, ``enqueue.cc:585``; all-reduce moves
  2 bytes of traffic per byte, all-gather and reduce-scatter ``nRanks``, LL 4 times that,
  ``enqueue.cc:91-101, 657-659``) and each channel gets at least its share of the traffic,
  so a small message fills only ``ceil(cells / cellsPerChannel)`` channels.

NCCL's model makes bandwidth proportional to channels (``busBw = nChannels * bw``,
``tuning.cc:325``), so a call on ``used`` of ``nc`` channels moves its bytes at ``used / nc``
of the per-channel bandwidth, under the same caps: LL's ``llMaxBw`` caps the whole
communicator (``tuning.cc:327, 332``) and is not scaled; its latency term is unchanged. This is what
:attr:`simdist.cost.nccl.NcclEstimate.time` prices; ``model_time`` keeps NCCL's own
prediction, by which it chose. Not priced: fewer threads per channel (the ``nt`` halving
of ``enqueue.cc:2098-2103``), which NCCL's bandwidth model has no term for.
"""

from __future__ import annotations

from simdist.cost import nccl_constants as C

__all__ = ["launched_channels"]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _max_threads(algo: str, proto: str, simple_ring_threads: int) -> int:
    if proto == "LL":
        return C.LL_MAX_THREADS  # tuning.cc:253-254
    if proto == "LL128":
        return C.LL128_MAX_THREADS  # tuning.cc:255-256
    return simple_ring_threads if algo == "ring" else C.SIMPLE_MAX_THREADS  # tuning.cc:244-249


def _traffic_per_byte(collective: str, n_ranks: int) -> int:
    if collective == "all_reduce":
        return 2  # enqueue.cc:93-94
    if collective in ("all_gather", "reduce_scatter"):
        return n_ranks  # enqueue.cc:95-98
    return 1  # enqueue.cc:99-100


def launched_channels(
    collective: str,
    algo: str,
    proto: str,
    nbytes: int,
    n_ranks: int,
    comm_channels: int,
    nvls_channels: int,
    simple_ring_threads: int = C.SIMPLE_MAX_THREADS,
) -> tuple[int, int]:
    """``(used, launched)``: channels carrying data, of the ``launched`` maximum for the pair.

    Args:
        collective, algo, proto: the call and NCCL's chosen pair.
        nbytes: the whole buffer (nccl-tests' size; NCCL's ``nBytes``).
        n_ranks: ranks of the communicator.
        comm_channels: the communicator's ring/tree channels (``comm->nChannels``).
        nvls_channels: its NVLS channels (``comm->nvlsChannels``).
        simple_ring_threads: ring Simple's maximum threads (256 on PCIe-only rings,
            ``tuning.cc:244-245``).
    """
    nvls = algo in ("nvls", "nvls_tree")
    launched = nvls_channels if nvls else comm_channels
    nc = launched
    if not nvls:
        p = C.PROTOCOLS.index(proto)
        threshold = C.THREAD_THRESHOLD[p] * (n_ranks if algo == "ring" and proto == "LL" else 1)
        nt = _max_threads(algo, proto, simple_ring_threads)
        while nbytes < nc * nt * threshold and nc >= 2:  # enqueue.cc:2096-2099
            nc -= 1
    # scheduleCollTasksToPlan, one task alone in its plan (enqueue.cc:576-700)
    per_byte = _traffic_per_byte(collective, n_ranks)
    count_bytes = nbytes // n_ranks if collective in ("all_gather", "reduce_scatter") else nbytes
    traffic = max(C.MIN_TRAFFIC_PER_CHANNEL, count_bytes * per_byte)
    traffic_per_channel = _ceil_div(traffic // nc, 16) * 16
    cell_per_byte = per_byte * (4 if proto == "LL" else 1)  # enqueue.cc:658
    cell_size = _ceil_div(_ceil_div(C.MIN_TRAFFIC_PER_CHANNEL, cell_per_byte), 16) * 16
    cells = max(1, _ceil_div(count_bytes, cell_size))
    cells_per_channel = min(cells, _ceil_div(traffic_per_channel, cell_size * cell_per_byte))
    used = min(_ceil_div(cells, cells_per_channel), nc, launched)
    return used, launched
