"""Fuzz the array ops: shapes, dtypes and axes of every kind, checked against NumPy.

Each call either matches NumPy or raises a documented error (docs/errors.md); a call NumPy
refuses (an axis out of range, a duplicate axis) must not return a value.
"""

import warnings

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

import simdist as tf
from tests.fuzz.contract import budget, outcome

SHAPES = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)
# ints (negative, out of range), lists (duplicates), and the wrong types TF refuses
AXES = st.one_of(
    st.none(),
    st.integers(-4, 4),
    st.lists(st.integers(-4, 4), max_size=3),
    st.tuples(st.integers(-3, 3), st.integers(-3, 3)),
    st.sampled_from(["0", "x", "", 1.0, 0.5, True, [1.5], [None], [[0]], {0: 1}]),
)
DTYPES = st.sampled_from(["float32", "float64", "int32", "int64", "bool"])
REDUCTIONS = {
    "reduce_sum": np.sum,
    "reduce_mean": np.mean,
    "reduce_max": np.max,
    "reduce_min": np.min,
    "reduce_prod": np.prod,
}


def _numpy_axis(axis, rank):
    """The axes NumPy reduces (TF's rules: ints in [-rank, rank), no duplicates), or None
    when TF (and this oracle) refuses the axis."""
    if axis is None:
        return tuple(range(rank))
    items = axis if isinstance(axis, (list, tuple)) else [axis]
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in items):
        return None
    if any(not -rank <= a < rank for a in items):
        return None
    normal = [a % rank for a in items]
    if len(set(normal)) != len(normal):
        return None
    return tuple(normal)


@budget(60)
@given(
    name=st.sampled_from(sorted(REDUCTIONS)),
    shape=SHAPES,
    dtype=DTYPES,
    axis=AXES,
    keepdims=st.booleans(),
)
@example(name="reduce_sum", shape=(2, 3), dtype="float32", axis=[0, 0], keepdims=False)
@example(name="reduce_sum", shape=(2,), dtype="float32", axis="0", keepdims=False)
@example(name="reduce_max", shape=(0,), dtype="float32", axis=0, keepdims=False)
@example(name="reduce_sum", shape=(2, 2), dtype="int32", axis=-3, keepdims=True)
@example(name="reduce_mean", shape=(0,), dtype="int32", axis=None, keepdims=False)  # TF: 0
@example(name="reduce_max", shape=(0,), dtype="float32", axis=[[0]], keepdims=False)  # was ok
def test_reductions_match_numpy_or_refuse(name, shape, dtype, axis, keepdims):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 5
    x = x.astype(dtype)
    kind, result = outcome(getattr(tf, name), tf.constant(x), axis=axis, keepdims=keepdims)
    axes = _numpy_axis(axis, x.ndim) if x.ndim else (None if axis not in (None, [], ()) else ())
    if axes is None:
        assert kind == "raised", f"{name}(axis={axis!r}) of rank {x.ndim} returned a value"
        return
    if kind == "raised":
        assert dtype == "bool", result  # TF reduces no bools but with reduce_any/all
        return
    extra = {}
    if name in ("reduce_max", "reduce_min"):  # TF's identity of an empty max: the lowest value
        info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
        low, high = (-np.inf, np.inf) if dtype.startswith("float") else (info.min, info.max)
        extra["initial"] = low if name == "reduce_max" else high
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Mean of empty slice"
        expected = REDUCTIONS[name](x, axis=axes, keepdims=keepdims, **extra)
    if name == "reduce_mean" and dtype.startswith("int"):  # TF: truncating; 0 of nothing
        total = np.sum(x, axis=axes, keepdims=keepdims)
        count = int(np.prod([x.shape[a] for a in axes])) if x.ndim else 1
        expected = np.zeros_like(total) if count == 0 else np.trunc(total / count)
    got = result.numpy()
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(expected, np.float64), rtol=1e-5)


@budget(40)
@given(
    shape=st.one_of(
        st.lists(st.integers(-2, 4), max_size=3),
        st.sampled_from([[2.5], [2.0], ["2"], [None], -1, 3, [[2]], [2**70]]),
    ),
    maker=st.sampled_from(["ones", "zeros"]),
    dtype=st.one_of(DTYPES, st.sampled_from([None, "nope", "", 7])),
)
@example(shape=[2.5], maker="ones", dtype="float32")
@example(shape=[2**70], maker="zeros", dtype="float32")
@example(shape=[2], maker="ones", dtype="nope")
@example(shape=[[2]], maker="ones", dtype="float32")  # was (2,): TF wants a vector of sizes
def test_ones_zeros_shapes(shape, maker, dtype):
    kwargs = {} if dtype is None else {"dtype": dtype}
    kind, result = outcome(getattr(tf, maker), shape, **kwargs)
    dims = shape if isinstance(shape, list) else [shape]
    valid_shape = all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= 4 for d in dims)
    valid_dtype = dtype in (None, "float32", "float64", "int32", "int64", "bool")
    if not (valid_shape and valid_dtype):
        assert kind == "raised", f"{maker}({shape!r}, dtype={dtype!r}) returned a value"
        return
    assert kind == "ok", result
    expected = (np.ones if maker == "ones" else np.zeros)(dims, dtype=dtype or "float32")
    np.testing.assert_array_equal(result.numpy(), expected)


@budget(40)
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
    axis=st.one_of(st.integers(-4, 4), st.sampled_from(["0", 1.0, None, [0]])),
    count=st.integers(0, 3),
)
@example(shape=(2,), axis=0, count=0)  # stack([]) was an IndexError
@example(shape=(1,), axis="0", count=1)  # stack(axis="0") was taken as 0; TF: TypeError
@example(shape=(1,), axis=[0], count=1)  # concat(axis=[0]) was taken as 0; TF: a scalar
@example(shape=(2, 2), axis=5, count=2)
def test_concat_and_stack(shape, axis, count):
    parts = [np.full(shape, i, np.float32) for i in range(count)]
    for name, oracle in (("concat", np.concatenate), ("stack", np.stack)):
        kind, result = outcome(getattr(tf, name), [tf.constant(p) for p in parts], axis=axis)
        rank = len(shape) + (name == "stack")
        if name == "stack" and isinstance(axis, float):
            axis_value = int(axis)  # TF's stack takes a float axis as its int
        else:
            axis_value = axis
        ok_axis = isinstance(axis_value, int) and -rank <= axis_value < rank
        if name == "stack" and count == 0 and ok_axis | isinstance(axis, int):
            assert kind == "ok", result  # TF: stack([]) is an empty float32 vector
            assert result.shape == (0,) and result.dtype == tf.float32
            continue
        if not (ok_axis and count):
            assert kind == "raised", f"{name}(axis={axis!r}, {count} parts) returned a value"
            continue
        assert kind == "ok", result
        np.testing.assert_array_equal(result.numpy(), oracle(parts, axis=axis_value))


@budget(40)
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
    multiples=st.one_of(
        st.lists(st.integers(-1, 3), min_size=0, max_size=4),
        st.sampled_from([[1.5], ["2"], None, 2]),
    ),
)
@example(shape=(2,), multiples=[-1])
@example(shape=(2, 2), multiples=[2])
@example(shape=(1,), multiples=2)  # a scalar was taken as [2]; TF: multiples must be 1-D
def test_tile(shape, multiples):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    kind, result = outcome(tf.tile, tf.constant(x), multiples)
    valid = (
        isinstance(multiples, list)
        and len(multiples) == len(shape)
        and all(isinstance(m, int) and m >= 0 for m in multiples)
    )
    if not valid:
        assert kind == "raised", f"tile({shape}, {multiples!r}) returned a value"
        return
    assert kind == "ok", result
    np.testing.assert_array_equal(result.numpy(), np.tile(x, multiples))


@budget(40)
@given(
    dtype=st.one_of(
        DTYPES,
        st.sampled_from([None, "float", "nope", "", 3, "float8", "complex64", "uint8", "int8"]),
    ),
)
@example(dtype=None)
@example(dtype="nope")
def test_cast(dtype):
    x = np.array([0.0, 1.5, -2.0], np.float32)
    kind, result = outcome(tf.cast, tf.constant(x), dtype)
    known = {"float32", "float64", "int32", "int64", "bool", "uint8", "int8"}
    if dtype not in known:
        if kind == "ok":  # TF's aliases ("float" is float32) are fine, silence is not
            assert dtype == "float" and result.dtype == tf.float32, (dtype, result.dtype)
        return
    assert kind == "ok", result
    np.testing.assert_array_equal(result.numpy(), x.astype(dtype))


@budget(40)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple),
    axis=st.one_of(st.integers(-5, 5), st.sampled_from(["0", 1.0, None, [0, 1]])),
)
@example(shape=(), axis=1)
@example(shape=(2,), axis=-3)
def test_expand_dims(shape, axis):
    x = np.zeros(shape, np.float32)
    kind, result = outcome(tf.expand_dims, tf.constant(x), axis)
    rank = len(shape)
    if not (isinstance(axis, int) and -rank - 1 <= axis <= rank):
        assert kind == "raised", f"expand_dims(rank {rank}, {axis!r}) returned a value"
        return
    assert kind == "ok", result
    assert result.shape == np.expand_dims(x, axis).shape
