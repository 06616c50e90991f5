"""Closed-form alpha-beta costs of the classic collective algorithms.

The Hockney model: sending ``m`` bytes between two ranks costs ``alpha + m * beta``
(``alpha`` the latency in seconds, ``beta = 1 / bandwidth`` in seconds per byte). On a fully
connected network with one link per ordered pair of ranks every rank can send to and receive
from any other at full rate, and the costs of the algorithms below follow (Thakur,
Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH",
IJHPCA 19(1), 2005; Chan et al., "Collective communication: theory, practice, and
experience", CCPE 19(13), 2007). ``n`` is the size of the whole buffer in bytes (for
all-gather the gathered output, for reduce-scatter the input), ``p`` the number of ranks.
The reduction's arithmetic (the ``gamma`` term) is not priced: GPUs reduce at memory speed
while the data moves.

These formulas are the oracle the tests hold :func:`simdist.cost.price` against: pricing an
algorithm's schedule on :func:`simdist.topology.fully_connected` must give them exactly (up
to float rounding) whenever ``p`` divides ``n`` and, where stated, ``p`` is a power of two.
"""

from __future__ import annotations

import math

__all__ = [
    "ring_all_reduce",
    "ring_reduce_scatter",
    "ring_all_gather",
    "recursive_doubling_all_reduce",
    "recursive_doubling_all_gather",
    "recursive_halving_reduce_scatter",
    "rabenseifner_all_reduce",
    "binomial_broadcast",
    "binomial_reduce",
    "direct_broadcast",
    "direct_all_reduce",
    "direct_reduce_scatter",
    "direct_all_gather",
    "reduce_broadcast_all_reduce",
    "pipelined_chain_broadcast",
    "direct_all_to_all",
    "pairwise_all_to_all",
]


def _log2(p: int) -> int:
    if p < 1 or p & (p - 1):
        raise ValueError(f"this algorithm needs a power-of-two number of ranks, got {p}")
    return p.bit_length() - 1


def ring_reduce_scatter(p: int, n: float, alpha: float, beta: float) -> float:
    """Ring reduce-scatter: ``p-1`` steps, each rank passes ``n/p`` bytes to its neighbour.

    ``(p-1) alpha + (p-1)/p n beta`` (Thakur et al. 2005, section 4.4; Chan et al. 2007).
    """
    return (p - 1) * alpha + (p - 1) / p * n * beta


def ring_all_gather(p: int, n: float, alpha: float, beta: float) -> float:
    """Ring all-gather of ``n`` gathered bytes: ``(p-1) alpha + (p-1)/p n beta``
    (Thakur et al. 2005, section 4.1)."""
    return (p - 1) * alpha + (p - 1) / p * n * beta


def ring_all_reduce(p: int, n: float, alpha: float, beta: float) -> float:
    """Ring all-reduce = ring reduce-scatter + ring all-gather:
    ``2(p-1) alpha + 2(p-1)/p n beta`` (Thakur et al. 2005, section 4.5; Patarasuk & Yuan,
    "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009)."""
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta


def recursive_doubling_all_reduce(p: int, n: float, alpha: float, beta: float) -> float:
    """Recursive doubling all-reduce (power-of-two ``p``): ``log2(p)`` exchanges of the whole
    buffer, ``log2(p) (alpha + n beta)`` (Thakur et al. 2005, section 4.5)."""
    return _log2(p) * (alpha + n * beta)


def recursive_doubling_all_gather(p: int, n: float, alpha: float, beta: float) -> float:
    """Recursive doubling all-gather (power-of-two ``p``): exchanged pieces double each step,
    ``log2(p) alpha + (p-1)/p n beta`` (Thakur et al. 2005, section 4.1)."""
    return _log2(p) * alpha + (p - 1) / p * n * beta


def recursive_halving_reduce_scatter(p: int, n: float, alpha: float, beta: float) -> float:
    """Recursive halving reduce-scatter (power-of-two ``p``): exchanged halves shrink each
    step, ``log2(p) alpha + (p-1)/p n beta`` (Thakur et al. 2005, section 4.4)."""
    return _log2(p) * alpha + (p - 1) / p * n * beta


def rabenseifner_all_reduce(p: int, n: float, alpha: float, beta: float) -> float:
    """Rabenseifner's all-reduce (power-of-two ``p``): recursive-halving reduce-scatter then
    recursive-doubling all-gather, ``2 log2(p) alpha + 2(p-1)/p n beta`` (Thakur et al.
    2005, section 4.5; Rabenseifner, "Optimization of collective reduction operations",
    ICCS 2004)."""
    return 2 * _log2(p) * alpha + 2 * (p - 1) / p * n * beta


def binomial_broadcast(p: int, n: float, alpha: float, beta: float) -> float:
    """Binomial-tree broadcast: ``ceil(log2 p) (alpha + n beta)`` (Thakur et al. 2005,
    section 4.2, short messages)."""
    return math.ceil(math.log2(p)) * (alpha + n * beta) if p > 1 else 0.0


def binomial_reduce(p: int, n: float, alpha: float, beta: float) -> float:
    """Binomial-tree reduce: ``ceil(log2 p) (alpha + n beta)`` (Thakur et al. 2005,
    section 4.6, short messages; the gamma term is not priced)."""
    return binomial_broadcast(p, n, alpha, beta)


def direct_broadcast(p: int, n: float, alpha: float, beta: float) -> float:
    """Direct (one-shot) broadcast: the root sends ``n`` bytes to each of the ``p-1`` others
    at once over separate links, ``alpha + n beta`` (``0`` for one rank)."""
    return alpha + n * beta if p > 1 else 0.0


def direct_all_reduce(p: int, n: float, alpha: float, beta: float) -> float:
    """One-shot all-reduce: every rank sends its whole buffer to every other rank at once and
    reduces locally, ``alpha + n beta`` (latency-optimal; ``p-1`` times the traffic)."""
    return alpha + n * beta if p > 1 else 0.0


def direct_reduce_scatter(p: int, n: float, alpha: float, beta: float) -> float:
    """Direct reduce-scatter: each rank sends piece ``j`` (``n/p`` bytes) to rank ``j``, all at
    once, ``alpha + n/p beta``."""
    return alpha + n / p * beta if p > 1 else 0.0


def direct_all_gather(p: int, n: float, alpha: float, beta: float) -> float:
    """Direct all-gather of ``n`` gathered bytes: each rank sends its ``n/p`` bytes to every
    other rank at once, ``alpha + n/p beta``."""
    return alpha + n / p * beta if p > 1 else 0.0


def reduce_broadcast_all_reduce(p: int, n: float, alpha: float, beta: float) -> float:
    """Direct reduce to a root, then direct broadcast: ``2 (alpha + n beta)``."""
    return 2 * (alpha + n * beta) if p > 1 else 0.0


def pipelined_chain_broadcast(
    p: int, n: float, alpha: float, beta: float, chunks: int = 1
) -> float:
    """Broadcast (or reduce) along a chain of ``p`` ranks in ``k = chunks`` pipelined pieces:
    ``(p - 2 + k) (alpha + n/k beta)`` (Thakur et al. 2005, section 4.2 and the pipelined
    analysis in Chan et al. 2007)."""
    return (p - 2 + chunks) * (alpha + n / chunks * beta) if p > 1 else 0.0


def direct_all_to_all(p: int, n: float, alpha: float, beta: float) -> float:
    """Direct all-to-all of an ``n``-byte buffer per rank: every rank sends ``n/p`` bytes to
    each other rank at once, ``alpha + n/p beta`` on a fully connected network."""
    return alpha + n / p * beta if p > 1 else 0.0


def pairwise_all_to_all(p: int, n: float, alpha: float, beta: float) -> float:
    """Pairwise-exchange all-to-all: ``p-1`` steps of ``n/p`` bytes,
    ``(p-1) alpha + (p-1)/p n beta`` (Thakur et al. 2005, section 4.7, long messages)."""
    return (p - 1) * alpha + (p - 1) / p * n * beta
