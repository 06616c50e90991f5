"""Reproducible sums: exact fixed-point accumulation, rounded once (a superaccumulator).

Method. Every finite float ``x = M * 2**E`` (``M`` an integer of at most 53 bits, 24 for
float32) is written exactly as a vector of 32-bit digits in int64 *limbs* relative to a
common base exponent (the smallest ``E`` in the block, so the window spans exactly the
block's range of exponents). Limbs are what the collective moves: the algorithm's plan is
executed unchanged on ``(elements, K)`` int64 buffers with integer additions, which are
exact and associative, so every rank ends with the same integers whatever the rank count,
order or algorithm. Carries are propagated once at the end and the integer is rounded to
the nearest float (ties to even) once, so the result is the *correctly rounded* exact sum:
it depends only on the multiset of values summed. With ``stacked=True`` a rank may
contribute several values (its leading axis), added exactly into its limbs first, so
splitting the same values over 1, 2, 3, 4 or 8 ranks gives the same bits.

Cost. ``K = (range_bits + mantissa + log2(count)) / 32 + 2`` limbs per element (K ~ 3-5
for data spanning a few decades, at most ~70 for float64 values spanning its whole range),
so the collective moves ``8 K / itemsize`` times the bytes of a plain one (a real system
would first all-reduce the exponent range, a few bytes); the encode / carry / round passes
cost a few dozen NumPy passes over the data (``scenarios/bench_collectives.py`` measures it;
about 10-30x a plain ring all-reduce). Memory is bounded by processing 32768 elements at a
time (all-reduce and reduce; reduce-scatter is done in one block).

Limits. Exact for every finite input and any count below 2**31 contributions per element.
Elements where any contribution is inf or NaN follow IEEE addition (NaN if any NaN or both
infinities, else the infinity), which is order-independent too. An exact zero result is
``+0.0``. Overflowing sums round to ``inf``. Only sum and mean (the correctly rounded sum
divided by the count) of floating arrays go this way: integer sums, max and min are already
independent of order.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from simdist.collectives.algorithms import build_plan
from simdist.collectives.executor import run_plan
from simdist.collectives.plan import Plan, Spec

__all__ = ["BLOCK_ELEMS", "encode", "decode", "run_exact"]

BLOCK_ELEMS = 1 << 15
_MASK = np.int64(0xFFFFFFFF)


def _mantissa_bits(dtype: np.dtype) -> int:
    return np.finfo(dtype).nmant + 1


def window(stacks: list[np.ndarray], mant: int) -> tuple[int, int]:
    """``(base, K)``: the base exponent and limb count covering every finite value."""
    lows, highs, count = [], [], 0
    for stack in stacks:
        count += stack.shape[0]
        x = stack[np.isfinite(stack) & (stack != 0)]
        if x.size:
            e = np.frexp(x.astype(np.float64))[1]
            lows.append(int(e.min()) - mant)
            highs.append(int(e.max()) - mant)
    if not lows:
        return 0, 3
    base = min(lows)
    top = max(highs) - base
    return base, max((top + mant + count.bit_length() + 1) // 32 + 2, (top >> 5) + 3)


def encode(stack: np.ndarray, base: int, num_limbs: int, mant: int) -> np.ndarray:
    """The exact sum of ``stack``'s rows (non-finite entries as 0) as ``(n, K)`` limbs."""
    n = stack.shape[1]
    limbs = np.zeros((n, num_limbs), dtype=np.int64)
    flat = limbs.reshape(-1)
    rows = np.arange(n) * num_limbs
    for values in stack:
        x = np.where(np.isfinite(values), values, 0).astype(np.float64)
        frac, exp = np.frexp(x)
        m = np.ldexp(frac, mant).astype(np.int64)
        pos = np.where(m != 0, exp - mant - base, 0)
        k, shift = pos >> 5, pos & 31
        sign, mag = np.sign(m), np.abs(m)
        low = (mag & _MASK) << shift
        high = (mag >> 32) << shift
        at = rows + k  # flat index of limb k of each element
        flat[at] += sign * (low & _MASK)
        flat[at + 1] += sign * ((low >> 32) + (high & _MASK))
        flat[at + 2] += sign * (high >> 32)
    return limbs


def _normalise(limbs: np.ndarray) -> None:
    for j in range(limbs.shape[1] - 1):
        carry = limbs[:, j] >> 32
        limbs[:, j] -= carry << 32
        limbs[:, j + 1] += carry


def decode(limbs: np.ndarray, base: int, dtype: np.dtype) -> np.ndarray:
    """Rounds exact limbs to the nearest ``dtype`` value (ties to even)."""
    mant = _mantissa_bits(dtype)
    work = limbs.copy()
    _normalise(work)
    negative = work[:, -1] < 0
    work[negative] = -work[negative]
    _normalise(work)
    n, k = work.shape
    padded = np.concatenate([np.zeros((n, 2), dtype=np.int64), work], axis=1)
    nonzero = padded != 0
    is_zero = ~nonzero.any(axis=1)
    top = (k + 1) - np.argmax(nonzero[:, ::-1], axis=1)
    top[is_zero] = 2
    rows = np.arange(n)
    lead = padded[rows, top].astype(np.uint64)
    next1 = padded[rows, top - 1].astype(np.uint64)
    next2 = padded[rows, top - 2].astype(np.uint64)
    bits = np.frexp(np.maximum(lead, 1).astype(np.float64))[1].astype(np.uint64)
    word = (lead << (np.uint64(64) - bits)) | (next1 << (np.uint64(32) - bits)) | (next2 >> bits)
    in_top3 = nonzero[rows, top].astype(np.int64) + nonzero[rows, top - 1] + nonzero[rows, top - 2]
    lower_any = nonzero.sum(axis=1) > in_top3
    sticky = ((next2 & ((np.uint64(1) << bits) - np.uint64(1))) != 0) | lower_any
    drop = np.uint64(64 - mant)
    keep = word >> drop
    rem = word & ((np.uint64(1) << drop) - np.uint64(1))
    half = np.uint64(1) << (drop - np.uint64(1))
    up = (rem > half) | ((rem == half) & (sticky | ((keep & np.uint64(1)) == 1)))
    keep = keep + up.astype(np.uint64)
    msb = (top - 2) * 32 + bits.astype(np.int64) - 1 + base
    with np.errstate(over="ignore"):
        value = np.ldexp(keep.astype(np.float64), msb - mant + 1)
        value = np.where(negative, -value, value)
        value[is_zero] = 0.0
        return value.astype(dtype)


def _output_range(plan: Plan, rank: int) -> tuple[int, int] | None:
    if plan.outputs[rank] is None:
        return None
    if plan.finish:
        return 0, plan.elems
    return plan.segments[plan.outputs[rank]]


def run_exact(spec: Spec, stacks: list[np.ndarray], dtype: np.dtype) -> list:
    """Each rank's correctly rounded sum, moving limbs through ``spec``'s plan.

    Args:
        spec: a validated all_reduce / reduce / reduce_scatter spec.
        stacks: per rank, a ``(contributions, elems)`` float array.
        dtype: the result dtype (float16/32/64).

    Returns:
        Per rank its flat result (``None`` where the plan has no output).
    """
    mant = _mantissa_bits(dtype)
    n = spec.elems
    if spec.collective == "reduce_scatter" or n == 0:
        blocks = [(0, n)]
    else:
        blocks = [(s, min(s + BLOCK_ELEMS, n)) for s in range(0, n, BLOCK_ELEMS)]
    results: list = [None] * spec.num_ranks
    for start, stop in blocks:
        sub = [stack[:, start:stop] for stack in stacks]
        base, num_limbs = window(sub, mant)
        limbs = [encode(s, base, num_limbs, mant) for s in sub]
        special = np.zeros(stop - start, dtype=bool)
        for s in sub:
            special |= ~np.isfinite(s).all(axis=0)
        plan = build_plan(dataclasses.replace(spec, elems=stop - start))
        outs = run_plan(plan, limbs, np.add)
        decoded: list[tuple[np.ndarray, np.ndarray]] = []
        for r, out in enumerate(outs):
            span = _output_range(plan, r)
            if out is None or span is None:
                continue
            # decoding is a pure function of the limbs: ranks holding the same limbs (every
            # rank, after an all-reduce) share one decode
            values = next((v for o, v in decoded if np.array_equal(o, out)), None)
            if values is None:
                values = decode(out, base, dtype)
                decoded.append((out, values))
            else:
                values = values.copy()
            lo, hi = span
            if special[lo:hi].any():
                with np.errstate(invalid="ignore", over="ignore"):
                    ieee = sum(s[:, lo:hi].astype(np.float64).sum(axis=0) for s in sub)
                values = np.where(special[lo:hi], ieee.astype(dtype), values)
            if results[r] is None:
                results[r] = [] if len(blocks) > 1 else values
            if len(blocks) > 1:
                results[r].append(values)
    if len(blocks) > 1:
        results = [None if r is None else np.concatenate(r) for r in results]
    return results
