"""One worker's share of a collective plan: its buffers, its messages, its arithmetic.

A multi-process transport (MPI, or processes started one per ``TF_CONFIG``) executes a
:class:`~simdist.collectives.plan.Plan` *distributed*: each worker keeps working buffers only
for the plan ranks it owns. :func:`compile_program` turns the plan into this worker's
program, step by step: the moves whose source is another worker's rank are *receives*, the
moves whose destination is another worker's rank are *sends*, and the moves between two of
its own ranks are memory operations. :func:`execute` runs the program, handing each step's
messages to the transport's ``transfer`` callback, and then applies the step's moves into
each destination in listed order with the same ``ufunc(destination, value)`` per element as
:func:`simdist.collectives.executor.run_plan`. Each step reads its sources as they were
before the step (a local source that the same step overwrites is snapshotted first), so
every rank's result is bit-identical to the one-process run on the gathered inputs, whatever
carries the bytes (determinism contract, rule 3).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from simdist.collectives.plan import Move, Plan

__all__ = ["Message", "Apply", "Step", "compile_program", "execute"]


@dataclasses.dataclass(frozen=True)
class Message:
    """One move that crosses workers: ``peer`` is the other worker, ``tag`` its number in
    the plan (the same on both sides), ``move`` the plan's move."""

    peer: int
    tag: int
    move: Move


@dataclasses.dataclass(frozen=True)
class Apply:
    """One move applied on this worker: from receive ``received`` (an index into the step's
    receives), or local (``received is None``; ``snapshot``: the step overwrites its source
    before it is read, so it is copied first)."""

    move: Move
    received: int | None
    snapshot: bool = False


@dataclasses.dataclass(frozen=True)
class Step:
    receives: tuple[Message, ...]
    sends: tuple[Message, ...]
    applies: tuple[Apply, ...]


# transfer(sends, send_arrays, receives, receive_views): deliver each send array to its peer
# and fill each receive view with what its peer sent, or raise.
Transfer = Callable[[tuple, list, tuple, list], None]


def compile_program(plan: Plan, owner: dict[int, int], me: int) -> list[Step]:
    """Worker ``me``'s steps of ``plan``; ``owner`` maps every plan rank to its worker."""
    seg = plan.segments
    program, tag = [], 0
    for step in plan.steps:
        written: dict[int, list[tuple[int, int]]] = {}
        for move in step:
            if owner[move.dst] == me:
                written.setdefault(move.dst, []).append(seg[move.dst_seg])
        receives, sends, applies = [], [], []
        for move in step:
            src_here, dst_here = owner[move.src] == me, owner[move.dst] == me
            if dst_here and not src_here:
                applies.append(Apply(move, len(receives)))
                receives.append(Message(owner[move.src], tag, move))
            elif src_here and not dst_here:
                sends.append(Message(owner[move.dst], tag, move))
            elif src_here:  # both here: a memory operation; snapshot if overwritten
                a, b = seg[move.src_seg]
                hazard = a < b and any(a < y and x < b for x, y in written.get(move.src, ()))
                applies.append(Apply(move, None, hazard))
            tag += 1
        program.append(Step(tuple(receives), tuple(sends), tuple(applies)))
    return program


def execute(
    plan: Plan,
    program: list[Step],
    mine: tuple[int, ...],
    arrays: list[np.ndarray],
    ufunc: np.ufunc | None,
    transfer: Transfer,
    receive_views: Callable[[tuple, np.dtype, tuple], list[np.ndarray]] | None = None,
) -> list:
    """Run ``program`` on this worker's inputs ``arrays`` (one per rank of ``mine``).

    ``receive_views(receives, dtype, trailing_shape)`` may supply the arrays receives land
    in (a transport's reusable scratch); by default each is a new array.

    Returns:
        Per rank of ``mine``, that rank's result (``None`` where the plan gives it none).
    """
    seg = plan.segments
    dtype = arrays[0].dtype if arrays else np.dtype(np.uint8)
    trail = arrays[0].shape[1:] if arrays else ()
    bufs: dict[int, np.ndarray] = {}
    for rank, flat in zip(mine, arrays, strict=True):
        buf = np.empty((plan.width,) + trail, dtype=dtype)
        s, e = seg[plan.inputs[rank]]
        buf[s:e] = flat
        bufs[rank] = buf
    for rank, src_seg, dst_seg in plan.local:
        if rank in bufs:
            bufs[rank][slice(*seg[dst_seg])] = bufs[rank][slice(*seg[src_seg])]
    for step in program:
        if receive_views is not None:
            views = receive_views(step.receives, dtype, trail)
        else:
            views = [_new_view(seg, m, dtype, trail) for m in step.receives]
        outgoing = [bufs[m.move.src][slice(*seg[m.move.src_seg])] for m in step.sends]
        snapshots = [
            bufs[a.move.src][slice(*seg[a.move.src_seg])].copy() if a.snapshot else None
            for a in step.applies
        ]
        transfer(step.sends, outgoing, step.receives, views)
        for apply, snap in zip(step.applies, snapshots, strict=True):
            move = apply.move
            if apply.received is not None:
                value = views[apply.received]
            else:
                value = snap if snap is not None else bufs[move.src][slice(*seg[move.src_seg])]
            target = bufs[move.dst][slice(*seg[move.dst_seg])]
            if move.reduce and ufunc is not None:
                ufunc(target, value, out=target)
            else:
                target[...] = value
    return [_result(plan, rank, bufs[rank], ufunc) for rank in mine]


def _new_view(seg, message: Message, dtype, trail) -> np.ndarray:
    s, e = seg[message.move.dst_seg]
    return np.empty((e - s,) + trail, dtype=dtype)


def _result(plan: Plan, rank: int, buf: np.ndarray, ufunc):
    out = plan.outputs[rank]
    if out is None:
        return None
    if plan.finish == "reduce_slots":
        slots = [buf[slice(*plan.segments[s])] for s in plan.finish_segs]
        total = slots[0].copy()
        for slot in slots[1:]:
            ufunc(total, slot, out=total)
        return total
    s, e = plan.segments[out]
    return buf if (s, e) == (0, plan.width) else buf[s:e].copy()
