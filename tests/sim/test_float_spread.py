"""simdist.sim.float_spread: ulps counted on bit patterns, checked against np.nextafter walks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist.sim.float_spread import ordinal, spread, ulp_distance

DTYPES = [np.float16, np.float32, np.float64]


def walk(start, steps: int, direction: float):
    """The float ``steps`` representable values from ``start`` (NumPy's nextafter)."""
    value = start
    target = type(start)(direction)
    for _ in range(steps):
        value = np.nextafter(value, target)
    return value


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    bits=st.integers(0, 2**64 - 1),
    steps=st.integers(0, 40),
    up=st.booleans(),
)
def test_distance_is_the_number_of_nextafter_steps(dtype, bits, steps, up):
    info = np.finfo(dtype)
    # any finite float of the format, from its bit pattern
    raw = np.array([bits % (1 << info.bits)], dtype=f"u{info.bits // 8}")
    start = raw.view(dtype)[0]
    if not np.isfinite(start):
        start = dtype(1.5)
    end, moves = start, 0
    for _ in range(steps):
        if np.isinf(end):  # inf is one past the largest float; nextafter stops there
            break
        end, moves = np.nextafter(end, dtype(np.inf if up else -np.inf)), moves + 1
    assert int(ulp_distance(start, end)) == moves
    assert int(ulp_distance(end, start)) == moves


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_and_the_ends_of_the_format(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    big = np.finfo(dtype).max
    assert int(ulp_distance(dtype(-0.0), dtype(0.0))) == 0
    assert int(ulp_distance(-tiny, tiny)) == 2  # -tiny -> (-)0 -> +tiny
    assert walk(-tiny, 2, np.inf) == tiny
    assert int(ulp_distance(big, dtype(np.inf))) == 1
    # the whole format: 2 * (number of positive finite floats + inf)
    positives = int(ordinal(dtype(np.inf)))
    assert int(ulp_distance(dtype(-np.inf), dtype(np.inf))) == 2 * positives


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False), min_size=2, max_size=30))
def test_ordinal_is_monotone_in_the_value(values):
    array = np.sort(np.array(values, dtype=np.float32))
    ords = ordinal(array)
    assert np.all(np.diff(ords) >= 0)
    # equal ordinals only for equal values (+0 and -0 are equal)
    same = np.diff(ords) == 0
    assert np.all(array[1:][same] == array[:-1][same])


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="NaN"):
        ulp_distance(np.float32(np.nan), np.float32(1))
    with pytest.raises(TypeError, match="one format"):
        ulp_distance(np.float32(1), np.float64(1))
    with pytest.raises(TypeError, match="float16/32/64"):
        ulp_distance(np.int32(1), np.int32(2))


def test_spread_of_versions():
    a = np.array([1.0, -2.0, 0.0, 3.0], np.float32)
    b = a.copy()
    b[1] = np.nextafter(b[1], np.float32(0))
    c = a.copy()
    c[1] = walk(c[1], 3, -np.inf)
    s = spread([a, b, c])
    assert (s.max_ulps, s.differing, s.size, s.finite) == (4, 1, 4, True)
    assert s.max_abs == float(b[1]) - float(c[1])  # 1 ulp below 2 (half size) + 3 above
    assert s.max_rel == pytest.approx(s.max_abs / abs(float(c[1])))
    same = spread([a, a.copy()])
    assert (same.max_abs, same.max_rel, same.max_ulps, same.differing) == (0.0, 0.0, 0, 0)
    with pytest.raises(ValueError, match="same variable"):
        spread([a, a[:2]])
