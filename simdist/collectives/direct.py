"""One-shot algorithms for switched fabrics: direct, pairwise (all-to-all), reduce_broadcast.

Orders of additions:

* ``direct`` all-reduce (one-shot): one step in which every rank sends its whole buffer to
  every other rank; each rank then reduces the ``p`` buffers in rank order,
  ``((x0 + x1) + x2) + ...``, so every rank computes the same bits (those of adding the
  replicas one by one in replica order). Example: ``[1.]``, ``[2.]``, ``[3.]`` -> every
  rank ``[6.]`` computed as ``(1 + 2) + 3``.
* ``direct`` reduce-scatter: one step; rank ``j`` receives piece ``j`` from every other
  rank, in rank order, into its own: ``((x[j] + x[0]) + x[1]) + ...`` (``x[j]`` skipped).
* ``direct`` reduce: every rank sends the root its buffer in one step, added in rank order
  into the root's own: ``((x[root] + x[0]) + x[1]) + ...``.
* ``direct`` all-gather / broadcast / all-to-all: one step of copies.
* ``pairwise`` all-to-all: ``p - 1`` steps; in step ``s`` rank ``j`` sends block
  ``(j + s) % p`` to rank ``(j + s) % p`` (a cyclic shift per step, no contention).
* ``reduce_broadcast`` all-reduce: ``direct`` reduce to ``root`` (rank order starting with
  the root's own value; for root 0 exactly ``((x0 + x1) + x2) + ...``, what adding in replica
  order gives), then ``direct`` broadcast of the root's result.

All-to-all buffers hold the input (``p`` blocks of ``elems / p``: block ``i`` is for rank
``i``) followed by the output (slot ``j`` receives rank ``j``'s block); a rank copies its own
block locally (not a message).
"""

from __future__ import annotations

from simdist.collectives.plan import Plan, Spec, piece_bounds, standard_builder

__all__ = ["direct", "pairwise", "reduce_broadcast"]


def direct(spec: Spec) -> Plan:
    """Everyone sends straight to its destination in one step."""
    b, inputs, whole = standard_builder(spec)
    p, n, c, root = spec.num_ranks, spec.elems, spec.collective, spec.root
    others = [[j for j in range(p) if j != r] for r in range(p)]
    if c == "all_reduce":
        # one buffer of p slots per rank: slot j receives rank j's input
        b = type(b)(c, spec.algorithm, p, n, width=p * n)
        slots = [b.seg(j * n, (j + 1) * n) for j in range(p)]
        for r in range(p):
            for j in others[r]:
                b.move(0, j, r, slots[j])
        return b.build(slots, [slots[0]] * p, finish="reduce_slots", finish_segs=tuple(slots))
    if c == "reduce_scatter":
        bounds = piece_bounds(n, p)
        pieces = [b.seg(bounds[r], bounds[r + 1]) for r in range(p)]
        for r in range(p):
            for j in others[r]:
                b.move(0, j, r, pieces[r], reduce=True)
        return b.build(inputs, pieces)
    if c == "reduce":
        for j in others[root]:
            b.move(0, j, root, whole, reduce=True)
        return b.build(inputs, [whole if r == root else None for r in range(p)])
    if c == "broadcast":
        for r in others[root]:
            b.move(0, root, r, whole)
        return b.build(inputs, [whole] * p)
    if c == "all_gather":
        for r in range(p):
            for j in others[r]:
                b.move(0, j, r, inputs[j])
        return b.build(inputs, [b.seg(0, p * n)] * p)
    return _all_to_all(spec, b, inputs, shifts=[list(range(1, p))])


def pairwise(spec: Spec) -> Plan:
    """All-to-all as ``p - 1`` cyclic shifts."""
    b, inputs, _ = standard_builder(spec)
    return _all_to_all(spec, b, inputs, shifts=[[s] for s in range(1, spec.num_ranks)])


def _all_to_all(spec: Spec, b, inputs, shifts: list[list[int]]) -> Plan:
    p, n = spec.num_ranks, spec.elems
    block = n // p
    blocks = [b.seg(i * block, (i + 1) * block) for i in range(p)]
    slots = [b.seg(n + j * block, n + (j + 1) * block) for j in range(p)]
    for r in range(p):
        b.local.append((r, blocks[r], slots[r]))
    for t, group in enumerate(shifts):
        for s in group:
            for j in range(p):
                i = (j + s) % p
                b.move(t, j, i, blocks[i], dst_seg=slots[j])
    return b.build(inputs, [b.seg(n, 2 * n)] * p)


def reduce_broadcast(spec: Spec) -> Plan:
    """All-reduce as a direct reduce to ``root`` followed by a direct broadcast."""
    b, inputs, whole = standard_builder(spec)
    p, root = spec.num_ranks, spec.root
    others = [j for j in range(p) if j != root]
    for j in others:
        b.move(0, j, root, whole, reduce=True)
    for j in others:
        b.move(1, root, j, whole)
    return b.build(inputs, [whole] * p)
