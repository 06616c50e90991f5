"""Ring-based algorithms: ring, ring_per_dimension (tori) and hierarchical (multi-host).

Orders of additions (the determinism contract; ``x[r]`` is rank ``r``'s input, positions
are taken modulo the ring length ``m``):

* ``ring`` all-reduce / reduce-scatter: the buffer is cut into ``p`` pieces
  (:func:`~simdist.collectives.plan.piece_bounds`); piece ``c`` is summed around the ring
  starting after its owner: ``((x[c+1] + x[c+2]) + x[c+3]) + ... + x[c]``, ending on rank
  ``c``; all-reduce then circulates the finished pieces (copies). Example, 3 ranks holding
  ``[1, 2, 3]``, ``[10, 20, 30]``, ``[100, 200, 300]``: piece 0 is ``(10 + 100) + 1``, every
  rank ends with ``[111, 222, 333]``. (For one result, the executor adds the pieces up
  directly in this order: :func:`~simdist.collectives.executor.rank_result`.)
* ``ring`` reduce (to ``root``): a pipelined chain ``root+1 -> root+2 -> ... -> root``,
  so ``((x[root+1] + x[root+2]) + ...) + x[root]`` for every pipeline piece; ``ring``
  broadcast: the chain ``root -> root+1 -> ...`` (copies). ``chunks`` pipeline pieces.
* ``ring_per_dimension`` on a torus with dims ``(d0, d1, ...)`` (row-major rank order: the
  last dimension varies fastest): a ring reduce-scatter along dimension 0 (each line of
  ``d0`` ranks, ring order by coordinate), then along dimension 1 on the piece each rank
  now owns, and so on; then ring all-gathers in reverse dimension order. Each piece's sum is
  therefore the dimension-0 ring sums, added by the dimension-1 ring order, etc.
* ``hierarchical``: ``L`` ranks on each of ``H`` hosts (ranks of a host in rank order,
  hosts in host-id order); the buffer is cut into ``L * H`` pieces. Intra-host ring
  reduce-scatter (local rank ``l`` owns pieces ``l*H .. l*H+H-1``), then an inter-host ring
  all-reduce among the ranks with the same local index, then an intra-host ring all-gather.
  A piece's sum is the ring order of each host's partial sums, each partial sum itself in
  the intra-host ring order.
"""

from __future__ import annotations

import numpy as np

from simdist.collectives.plan import (
    Plan,
    Spec,
    piece_bounds,
    ring_all_gather,
    ring_reduce_scatter,
    standard_builder,
)

__all__ = ["ring", "ring_per_dimension", "hierarchical"]


def ring(spec: Spec) -> Plan:
    """The (chunked) ring; see the module docstring for each collective's order."""
    b, inputs, whole = standard_builder(spec)
    p, n, c = spec.num_ranks, spec.elems, spec.collective
    ranks = list(range(p))
    if c in ("all_reduce", "reduce_scatter"):
        bounds = piece_bounds(n, p)
        segs = [b.seg(bounds[i], bounds[i + 1]) for i in range(p)]
        end = ring_reduce_scatter(b, 0, ranks, segs)
        if c == "reduce_scatter":
            return b.build(inputs, segs)
        ring_all_gather(b, end, ranks, segs)
        return b.build(inputs, [whole] * p)
    if c == "all_gather":
        ring_all_gather(b, 0, ranks, inputs)
        return b.build(inputs, [b.seg(0, p * n)] * p)
    # broadcast / reduce: a pipelined chain
    bounds = piece_bounds(n, spec.chunks)
    pieces = [b.seg(bounds[q], bounds[q + 1]) for q in range(spec.chunks)]
    if c == "broadcast":
        chain = [(spec.root + i) % p for i in range(p)]
    else:
        chain = [(spec.root + 1 + i) % p for i in range(p)]
    for i in range(p - 1):
        for q, piece in enumerate(pieces):
            b.move(q + i, chain[i], chain[i + 1], piece, reduce=(c == "reduce"))
    if c == "broadcast":
        return b.build(inputs, [whole] * p)
    return b.build(inputs, [whole if r == spec.root else None for r in range(p)])


def _lines(dims: tuple[int, ...], axis: int) -> list[tuple[list[int], int]]:
    """Lines of ranks along ``axis``; each with its prefix index (coords before ``axis``)."""
    index = np.arange(int(np.prod(dims))).reshape(dims)
    rows = np.moveaxis(index, axis, -1).reshape(-1, dims[axis])
    out = []
    for row in rows:
        coords = np.unravel_index(int(row[0]), dims)
        prefix = int(np.ravel_multi_index(coords[:axis], dims[:axis])) if axis else 0
        out.append(([int(r) for r in row], prefix))
    return out


def _dimension_phases(dims: tuple[int, ...]):
    """Per dimension: its lines, each with the piece range ``[lo, hi)`` of every position."""
    phases = []
    for axis, size in enumerate(dims):
        block = int(np.prod(dims[axis + 1 :]))
        lines = []
        for ranks, prefix in _lines(dims, axis):
            ranges = [
                ((prefix * size + j) * block, (prefix * size + j + 1) * block) for j in range(size)
            ]
            lines.append((ranks, ranges))
        phases.append(lines)
    return phases


def ring_per_dimension(spec: Spec) -> Plan:
    """Ring reduce-scatter per torus dimension, then all-gathers in reverse order."""
    b, inputs, whole = standard_builder(spec)
    p, n, c = spec.num_ranks, spec.elems, spec.collective
    phases = _dimension_phases(spec.dims)
    if c == "all_gather":
        t = 0
        for lines in reversed(phases):
            end = t
            for ranks, ranges in lines:
                segs = [b.seg(lo * n, hi * n) for lo, hi in ranges]
                end = ring_all_gather(b, t, ranks, segs)
            t = end
        return b.build(inputs, [b.seg(0, p * n)] * p)
    bounds = piece_bounds(n, p)
    t = 0
    for lines in phases:
        end = t
        for ranks, ranges in lines:
            segs = [b.seg(bounds[lo], bounds[hi]) for lo, hi in ranges]
            end = ring_reduce_scatter(b, t, ranks, segs)
        t = end
    if c == "reduce_scatter":
        return b.build(inputs, [b.seg(bounds[r], bounds[r + 1]) for r in range(p)])
    for lines in reversed(phases):
        end = t
        for ranks, ranges in lines:
            segs = [b.seg(bounds[lo], bounds[hi]) for lo, hi in ranges]
            end = ring_all_gather(b, t, ranks, segs)
        t = end
    return b.build(inputs, [whole] * p)


def hierarchical(spec: Spec) -> Plan:
    """Intra-host ring reduce-scatter, inter-host ring all-reduce, intra-host all-gather."""
    b, inputs, whole = standard_builder(spec)
    p, n = spec.num_ranks, spec.elems
    host_ids = sorted(set(spec.hosts))
    local = [[r for r in range(p) if spec.hosts[r] == h] for h in host_ids]
    num_local, num_hosts = len(local[0]), len(local)
    bounds = piece_bounds(n, num_local * num_hosts)

    def piece_seg(lo: int, hi: int) -> int:
        return b.seg(bounds[lo], bounds[hi])

    owned = [piece_seg(loc * num_hosts, (loc + 1) * num_hosts) for loc in range(num_local)]
    t1 = max([ring_reduce_scatter(b, 0, ranks, owned) for ranks in local])
    ends = [t1]
    for loc in range(num_local):
        across = [ranks[loc] for ranks in local]
        segs = [piece_seg(loc * num_hosts + h, loc * num_hosts + h + 1) for h in range(num_hosts)]
        mid = ring_reduce_scatter(b, t1, across, segs)
        ends.append(ring_all_gather(b, mid, across, segs))
    t2 = max(ends)
    for ranks in local:
        ring_all_gather(b, t2, ranks, owned)
    return b.build(inputs, [whole] * p)
