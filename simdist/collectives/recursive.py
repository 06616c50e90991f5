"""Recursive doubling and recursive halving-doubling (Rabenseifner), any rank count.

Non-powers of two are folded the standard way (MPICH's): with ``p'`` the largest power of
two ``<= p`` and ``e = p - p'``, each even rank ``2v < 2e`` first sends its whole buffer to
rank ``2v + 1`` (reduced in: ``x[2v+1] + x[2v]``; for all-gather its slot is copied), and
drops out; the ``p'`` remaining ranks are *virtual* ranks ``v`` (real ``2v + 1`` for
``v < e``, else ``v + e``) and run the power-of-two algorithm; at the end each ``2v + 1``
sends ``2v`` its result (a copy). Virtual rank ``v`` owns pieces/slots
``[start(v), start(v+1))`` with ``start(v) = 2v`` for ``v < e`` else ``v + e``, so ranges
of consecutive virtual ranks are contiguous.

Orders of additions (``y[v]`` = virtual rank ``v``'s value after the fold):

* ``recursive_doubling`` all-reduce: a butterfly, distance 1 first: step ``k`` every ``v``
  exchanges its whole buffer with ``v ^ 2**k`` and adds, so for 4 ranks every rank computes
  ``(y0 + y1) + (y2 + y3)`` (addition is commutative, so partners get the same bits).
  Example: 4 ranks holding ``[1.]``, ``[2.]``, ``[3.]``, ``[4.]`` all end with ``[10.]``.
* ``recursive_doubling`` reduce / broadcast (binomial tree, relative rank
  ``q = (r - root) % p``): reduce adds ``q + 2**k`` into ``q`` at step ``k`` for ``q`` a
  multiple of ``2**(k+1)``, giving ``((x0 + x1) + (x2 + x3)) + x4`` for 5 ranks; broadcast
  runs the same tree top-down (copies). No fold is needed for these two.
* ``recursive_halving_doubling`` all-reduce / reduce-scatter: the buffer is cut into ``p``
  pieces; distance ``p'/2`` first, each ``v`` keeps the half of its current range that
  holds its own pieces and sends the other half to ``v ^ mask``, which adds it; so a piece
  owned by ``v`` is ``(y[v] + y[v ^ p'/2]) + (y[v ^ p'/4] + y[v ^ p'/4 ^ p'/2]) ...`` — for 4
  ranks ``(y0 + y2) + (y1 + y3)`` on piece 0. All-reduce then all-gathers by recursive
  doubling (distance 1 first, copies).
"""

from __future__ import annotations

from simdist.collectives.plan import Builder, Plan, Spec, piece_bounds, standard_builder

__all__ = ["recursive_doubling", "recursive_halving_doubling"]


class _Fold:
    """The MPICH fold of ``p`` ranks onto ``p'`` virtual ranks."""

    def __init__(self, p: int) -> None:
        self.p = p
        self.pow2 = 1 << (p.bit_length() - 1)
        self.extra = p - self.pow2

    def real(self, v: int) -> int:
        return 2 * v + 1 if v < self.extra else v + self.extra

    def start(self, v: int) -> int:
        if v >= self.pow2:
            return self.p
        return 2 * v if v < self.extra else v + self.extra


def _fold_in(b: Builder, fold: _Fold, seg_of) -> int:
    """Step 0 when ``p`` is not a power of two: ``2v -> 2v+1``. Returns the next step."""
    for v in range(fold.extra):
        seg, reduce = seg_of(2 * v)
        b.move(0, 2 * v, 2 * v + 1, seg, reduce=reduce)
    return 1 if fold.extra else 0


def _fold_out(b: Builder, t: int, fold: _Fold, segs_of) -> None:
    for v in range(fold.extra):
        for seg in segs_of(2 * v):
            b.move(t, 2 * v + 1, 2 * v, seg)


def _doubling_gather(b: Builder, t: int, fold: _Fold, range_seg) -> int:
    """Virtual ranks exchange their owned blocks at distance 1, 2, 4 ... (copies)."""
    mask = 1
    while mask < fold.pow2:
        for v in range(fold.pow2):
            lo = v & ~(mask - 1)
            b.move(t, fold.real(v), fold.real(v ^ mask), range_seg(lo, lo + mask))
        t, mask = t + 1, mask * 2
    return t


def recursive_doubling(spec: Spec) -> Plan:
    """Butterfly all-reduce / all-gather; binomial-tree reduce / broadcast."""
    b, inputs, whole = standard_builder(spec)
    p, n, c = spec.num_ranks, spec.elems, spec.collective
    if c in ("reduce", "broadcast"):
        absolute = [(q + spec.root) % p for q in range(p)]
        masks = [1 << k for k in range((p - 1).bit_length())]
        if c == "broadcast":
            for t, mask in enumerate(reversed(masks)):
                for q in range(0, p - mask, 2 * mask):
                    b.move(t, absolute[q], absolute[q + mask], whole)
            return b.build(inputs, [whole] * p)
        for t, mask in enumerate(masks):
            for q in range(mask, p, 2 * mask):
                b.move(t, absolute[q], absolute[q - mask], whole, reduce=True)
        return b.build(inputs, [whole if r == spec.root else None for r in range(p)])
    fold = _Fold(p)
    if c == "all_gather":
        t = _fold_in(b, fold, lambda r: (inputs[r], False))

        def slots(lo: int, hi: int) -> int:
            return b.seg(fold.start(lo) * n, fold.start(hi) * n)

        t = _doubling_gather(b, t, fold, slots)
        # 2v+1 sends 2v every slot but 2v's own (the slots before it exist unless v = 0)
        _fold_out(b, t, fold, lambda r: [b.seg(0, r * n)] * (r > 0) + [b.seg((r + 1) * n, p * n)])
        return b.build(inputs, [b.seg(0, p * n)] * p)
    # all_reduce
    t = _fold_in(b, fold, lambda r: (whole, True))
    mask = 1
    while mask < fold.pow2:
        for v in range(fold.pow2):
            b.move(t, fold.real(v), fold.real(v ^ mask), whole, reduce=True)
        t, mask = t + 1, mask * 2
    _fold_out(b, t, fold, lambda r: [whole])
    return b.build(inputs, [whole] * p)


def recursive_halving_doubling(spec: Spec) -> Plan:
    """Rabenseifner: recursive-halving reduce-scatter (+ recursive-doubling all-gather)."""
    b, inputs, whole = standard_builder(spec)
    p, n = spec.num_ranks, spec.elems
    fold = _Fold(p)
    bounds = piece_bounds(n, p)

    def pieces(lo: int, hi: int) -> int:
        return b.seg(bounds[fold.start(lo)], bounds[fold.start(hi)])

    t = _fold_in(b, fold, lambda r: (whole, True))
    mask = fold.pow2 // 2
    while mask >= 1:
        for v in range(fold.pow2):
            lo = v & ~(2 * mask - 1)
            give = (lo + mask, lo + 2 * mask) if v & mask == 0 else (lo, lo + mask)
            b.move(t, fold.real(v), fold.real(v ^ mask), pieces(*give), reduce=True)
        t, mask = t + 1, mask // 2
    if spec.collective == "reduce_scatter":
        _fold_out(b, t, fold, lambda r: [b.seg(bounds[r], bounds[r + 1])])
        return b.build(inputs, [b.seg(bounds[r], bounds[r + 1]) for r in range(p)])
    t = _doubling_gather(b, t, fold, pieces)
    _fold_out(b, t, fold, lambda r: [whole])
    return b.build(inputs, [whole] * p)
