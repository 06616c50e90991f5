"""Executes a plan's arithmetic on real arrays, move by move, in the plan's order.

Every rank has its own working buffer. A move copies (or, with ``reduce=True``, combines
with the op's ufunc) a whole segment at once, in place in the destination's buffer, so the
cost is a handful of NumPy calls per move and the rounding is exactly the algorithm's.

Buffers are materialised lazily per *atom* (the finest partition of the buffer that every
segment boundary respects): an atom a rank has not written yet is read straight from its
input array, and the first reduction into it writes ``input (+) received`` into the buffer,
so no up-front copy of the inputs is made. Reading an atom a rank never held raises
``RuntimeError`` (an invalid schedule), which makes the executor a validity check too.

The contract (one, for every way a collective's numbers are computed): a plan's result on
rank ``r`` is what :func:`run_plan` returns for ``r`` here, bit for bit. It is computed three
ways, and each is bound to this one:

* :func:`run_plan` itself: the plan's moves, each a ufunc call on the receiving rank's value
  and the sent one, in the plan's step order (compiled into per-atom programs when the
  segments allow, else move by move). The in-process transport of a virtual cluster calls
  it on every worker's inputs.
* :func:`rank_result`: one rank's result, for callers that need just one (the in-process
  strategies' cross-device ops). For a ring all-reduce it adds each piece up directly, in
  the plan's order and operand order, without the all-gather's copies; every other plan runs.
* :meth:`simdist.backends.mpi.MPITransport.run_plan`: the same moves across processes, each
  process applying the ufunc calls of its own rank in the same order.

``tests/collectives/test_ring_result.py`` checks the second against the first (NaN, inf and
-0 included) and ``tests/backends`` the third against the first under ``mpiexec``.
"""

from __future__ import annotations

import numpy as np

from simdist.collectives.plan import Plan, piece_bounds

__all__ = ["run_plan", "rank_result"]

_UNDEFINED, _INPUT, _OWN = 0, 1, 2


class _Rank:
    """One rank's buffer, its input, and the state of each atom."""

    def __init__(self, plan: Plan, rank: int, flat: np.ndarray) -> None:
        self.plan = plan
        self.rank = rank
        self.buf = np.empty((plan.width,) + flat.shape[1:], dtype=flat.dtype)
        self.state = np.full(len(plan.atom_bounds) - 1, _UNDEFINED, dtype=np.int8)
        seg = plan.inputs[rank]
        self.in_start = plan.segments[seg][0]
        self.flat = flat
        a0, a1 = plan.seg_atoms[seg]
        self.state[a0:a1] = _INPUT

    def _materialise(self, a0: int, a1: int) -> None:
        bounds = self.plan.atom_bounds
        for a in range(a0, a1):
            if self.state[a] == _INPUT:
                s, e = bounds[a], bounds[a + 1]
                self.buf[s:e] = self.flat[s - self.in_start : e - self.in_start]
                self.state[a] = _OWN

    def read(self, seg: int) -> np.ndarray:
        """The segment's current contents (a view; copy it if it may be overwritten)."""
        s, e = self.plan.segments[seg]
        a0, a1 = self.plan.seg_atoms[seg]
        if a0 == a1:
            return self.buf[s:e]
        states = self.state[a0:a1]
        low, high = states.min(), states.max()
        if low == _UNDEFINED:
            raise RuntimeError(
                f"{self.plan.algorithm}: rank {self.rank} sends elements [{s}, {e}) "
                "before it holds them (invalid schedule)"
            )
        if high == _INPUT:
            return self.flat[s - self.in_start : e - self.in_start]
        if low == _INPUT:
            self._materialise(a0, a1)
        return self.buf[s:e]

    def write(self, seg: int, value: np.ndarray, ufunc: np.ufunc | None) -> None:
        """Stores ``value`` (``ufunc is None``) or combines it in place into the segment."""
        s, e = self.plan.segments[seg]
        a0, a1 = self.plan.seg_atoms[seg]
        if a0 == a1:
            return
        target = self.buf[s:e]
        if ufunc is None:
            target[...] = value
        else:
            states = self.state[a0:a1]
            low, high = states.min(), states.max()
            if low == _UNDEFINED:
                raise RuntimeError(
                    f"{self.plan.algorithm}: rank {self.rank} reduces into elements "
                    f"[{s}, {e}) it never held (invalid schedule)"
                )
            if high == _INPUT:
                ufunc(self.flat[s - self.in_start : e - self.in_start], value, out=target)
            else:
                if low == _INPUT:
                    self._materialise(a0, a1)
                ufunc(target, value, out=target)
        self.state[a0:a1] = _OWN

    def result(self, seg: int) -> np.ndarray:
        """The segment as an independent array (a copy unless it is the whole buffer)."""
        s, e = self.plan.segments[seg]
        a0, a1 = self.plan.seg_atoms[seg]
        view = self.read(seg)
        if a0 == a1 or self.state[a0:a1].max() == _INPUT or (e - s) < self.plan.width:
            return view.copy()
        return view


def _hazards(plan: Plan) -> list[list[bool]]:
    """Per step, per move: is its source overwritten in the same step (snapshot it first)?"""
    out = []
    for step in plan.steps:
        writes: dict[int, list[tuple[int, int]]] = {}
        for m in step:
            writes.setdefault(m.dst, []).append(plan.segments[m.dst_seg])
        flags = []
        for m in step:
            a, b = plan.segments[m.src_seg]
            flags.append(a < b and any(a < d1 and d0 < b for d0, d1 in writes.get(m.src, ())))
        out.append(flags)
    return out


def _aligned(plan: Plan) -> bool:
    return all(m.src_seg == m.dst_seg for step in plan.steps for m in step) and not plan.local


def _compile_atoms(plan: Plan):
    """Per atom, the plan's moves on it as ops on (rank, "in"/"buf"/"tmp") operands.

    Element positions are independent: an element's value only ever meets the same
    position on other ranks (moves keep positions), so running each atom's ops to completion
    (tile by tile, while the tile sits in cache) performs exactly the same additions in
    exactly the same order as running the plan step by step.
    """
    natoms = len(plan.atom_bounds) - 1
    per_atom: list[list[tuple[int, int]]] = [[] for _ in range(natoms)]
    for t, step in enumerate(plan.steps):
        for i, m in enumerate(step):
            a0, a1 = plan.seg_atoms[m.src_seg]
            for a in range(a0, a1):
                per_atom[a].append((t, i))
    input_atoms = [plan.seg_atoms[plan.inputs[r]] for r in range(plan.num_ranks)]
    output_atoms = [None if o is None else plan.seg_atoms[o] for o in plan.outputs]
    if plan.finish:
        output_atoms = [(0, natoms) if o is not None else None for o in plan.outputs]
    programs = []
    max_tmp = 0
    for a in range(natoms):
        state = [_INPUT if lo <= a < hi else _UNDEFINED for lo, hi in input_atoms]
        ops = []
        entries = per_atom[a]
        k = 0
        while k < len(entries):
            t = entries[k][0]
            group = []
            while k < len(entries) and entries[k][0] == t:
                group.append(plan.steps[t][entries[k][1]])
                k += 1
            written = {m.dst for m in group}
            sources = []
            for m in group:
                if state[m.src] == _UNDEFINED:
                    raise RuntimeError(
                        f"{plan.algorithm}: rank {m.src} sends elements it does not hold "
                        f"(step {t}; invalid schedule)"
                    )
                operand = (m.src, "in" if state[m.src] == _INPUT else "buf")
                if m.src in written:
                    ops.append(("copy", operand, (len(sources), "tmp")))
                    operand = (len(sources), "tmp")
                sources.append(operand)
            max_tmp = max(max_tmp, len(sources))
            for m, operand in zip(group, sources, strict=True):
                if not m.reduce:
                    ops.append(("copy", operand, (m.dst, "buf")))
                elif state[m.dst] == _UNDEFINED:
                    raise RuntimeError(
                        f"{plan.algorithm}: rank {m.dst} reduces into elements it never held "
                        f"(step {t}; invalid schedule)"
                    )
                else:
                    here = (m.dst, "in" if state[m.dst] == _INPUT else "buf")
                    ops.append(("reduce", here, operand, (m.dst, "buf")))
                state[m.dst] = _OWN
        for r, span in enumerate(output_atoms):
            if span is not None and span[0] <= a < span[1]:
                if state[r] == _UNDEFINED and plan.outputs[r] is not None:
                    raise RuntimeError(f"{plan.algorithm}: rank {r} ends without its result")
                if state[r] == _INPUT:
                    ops.append(("copy", (r, "in"), (r, "buf")))
                    state[r] = _OWN
        programs.append(ops)
    return programs, max_tmp


_PROGRAMS: dict[int, tuple] = {}
TILE_BYTES = 1 << 18


def _run_atoms(plan: Plan, flats: list[np.ndarray], ufunc, out=None) -> list[np.ndarray]:
    key = id(plan)
    cached = _PROGRAMS.get(key)
    if cached is None or cached[0] is not plan:
        cached = (plan, *_compile_atoms(plan))
        if len(_PROGRAMS) > 64:
            _PROGRAMS.clear()
        _PROGRAMS[key] = cached
    _, programs, max_tmp = cached
    flat0 = flats[0]
    row = flat0[0:1].nbytes or flat0.dtype.itemsize
    tile = max(1, TILE_BYTES // row)
    if out is None:
        bufs = [np.empty((plan.width,) + flat0.shape[1:], dtype=flat0.dtype) for _ in flats]
    else:
        bufs = out
    tmps = [np.empty((tile,) + flat0.shape[1:], dtype=flat0.dtype) for _ in range(max_tmp)]
    starts = [plan.segments[plan.inputs[r]][0] for r in range(plan.num_ranks)]
    bounds = plan.atom_bounds
    for a, ops in enumerate(programs):
        if not ops:
            continue
        for lo in range(int(bounds[a]), int(bounds[a + 1]), tile):
            hi = min(lo + tile, int(bounds[a + 1]))

            def get(operand, lo=lo, hi=hi):
                who, kind = operand
                if kind == "buf":
                    return bufs[who][lo:hi]
                if kind == "in":
                    return flats[who][lo - starts[who] : hi - starts[who]]
                return tmps[who][: hi - lo]

            for op in ops:
                if op[0] == "copy":
                    get(op[2])[...] = get(op[1])
                else:
                    ufunc(get(op[1]), get(op[2]), out=get(op[3]))
    return bufs


def supports_out(plan: Plan) -> bool:
    """Whether results can be written into caller-given buffers (``out=``; may alias inputs).

    Aliasing an input is safe: a rank reads its input only at positions it has not written
    yet, and the per-atom programs snapshot any source overwritten in the same step.
    """
    return _aligned(plan) and not plan.finish and plan.width == plan.elems


def run_plan(plan: Plan, flats: list[np.ndarray], ufunc: np.ufunc | None, out=None) -> list:
    """Applies ``plan`` to one flat array per rank; returns each rank's result or ``None``.

    Args:
        plan: the algorithm's plan.
        flats: per rank, its input with ``plan.elems`` rows (1-D, or 2-D for limb arrays).
        ufunc: the reduction (``np.add``, ``np.maximum`` ...); unused by copy-only plans.
        out: optional flat per-rank result buffers (see :func:`supports_out`).

    Returns:
        Per rank, its output segment as a fresh array (``None`` where the plan has none).
    """
    if out is not None:
        if not supports_out(plan):
            raise ValueError(f"{plan.algorithm} {plan.collective} cannot write into out=")
        bufs = _run_atoms(plan, flats, ufunc, out)
        return _results_from(plan, bufs, ufunc)
    if _aligned(plan):
        bufs = _run_atoms(plan, flats, ufunc)
        return _results_from(plan, bufs, ufunc)
    ranks = [_Rank(plan, r, flat) for r, flat in enumerate(flats)]
    for rank, src_seg, dst_seg in plan.local:
        ranks[rank].write(dst_seg, ranks[rank].read(src_seg), None)
    for step, hazards in zip(plan.steps, _hazards(plan), strict=True):
        sent = [
            ranks[m.src].read(m.src_seg).copy() if h else None
            for m, h in zip(step, hazards, strict=True)
        ]
        for m, value in zip(step, sent, strict=True):
            if value is None:
                value = ranks[m.src].read(m.src_seg)
            ranks[m.dst].write(m.dst_seg, value, ufunc if m.reduce else None)
    results = []
    for rank, out in zip(ranks, plan.outputs, strict=True):
        if out is None:
            results.append(None)
        elif plan.finish == "reduce_slots":
            slots = [rank.read(seg) for seg in plan.finish_segs]
            total = slots[0].copy()
            for slot in slots[1:]:
                ufunc(total, slot, out=total)
            results.append(total)
        else:
            results.append(rank.result(out))
    return results


def _results_from(plan: Plan, bufs: list[np.ndarray], ufunc) -> list:
    results = []
    for buf, out in zip(bufs, plan.outputs, strict=True):
        if out is None:
            results.append(None)
        elif plan.finish == "reduce_slots":
            slots = [buf[slice(*plan.segments[seg])] for seg in plan.finish_segs]
            total = slots[0].copy()
            for slot in slots[1:]:
                ufunc(total, slot, out=total)
            results.append(total)
        else:
            s, e = plan.segments[out]
            results.append(buf if (s, e) == (0, plan.width) else buf[s:e].copy())
    return results


def rank_result(plan: Plan, flats: list[np.ndarray], ufunc: np.ufunc | None, rank: int = 0):
    """Rank ``rank``'s result of ``plan``: ``run_plan(plan, flats, ufunc)[rank]``, bit for bit.

    A ``ring`` all-reduce on 1-D inputs computes it directly (:func:`_ring_all_reduce_result`);
    every other plan is run.
    """
    if plan.collective == "all_reduce" and plan.algorithm == "ring" and flats[0].ndim == 1:
        return _ring_all_reduce_result(flats, ufunc)
    return run_plan(plan, flats, ufunc)[rank]


def _ring_all_reduce_result(flats: list[np.ndarray], ufunc: np.ufunc) -> np.ndarray:
    """The ring all-reduce's result (every rank ends with it): per piece ``c``, the additions
    the plan makes on its way round the ring, in the same order and with the same operand
    order (the receiving rank's value first): ``x[c+2] op x[c+1]``, then ``x[c+3] op that``,
    ..., ``x[c] op that``.

    It does the ``(p - 1) * n`` operations and nothing else: no all-gather copies, no other
    ranks' buffers.
    """
    p, n = len(flats), flats[0].shape[0]
    out = np.empty_like(flats[0])
    if p == 1:
        out[...] = flats[0]
        return out
    bounds = piece_bounds(n, p)
    for c in range(p):
        lo, hi = bounds[c], bounds[c + 1]
        if lo == hi:
            continue
        acc = out[lo:hi]
        ufunc(flats[(c + 2) % p][lo:hi], flats[(c + 1) % p][lo:hi], out=acc)
        for i in range(3, p + 1):
            ufunc(flats[(c + i) % p][lo:hi], acc, out=acc)
    return out
