"""Fuzz the shape ops (reshape, transpose, squeeze, argmax, gather, split, one_hot) against
NumPy: a value equals NumPy's, a refusal is a documented error (docs/errors.md)."""

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

import simdist as tf
from tests.fuzz.contract import budget, outcome

SHAPES = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)
ODD = st.sampled_from(["0", 1.0, None, True, [None], [[0]]])


def _x(shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


@budget(40)
@given(shape=SHAPES, new=st.one_of(st.lists(st.integers(-2, 6), max_size=3), ODD))
@example(shape=(2, 3), new=[-1, -1])
@example(shape=(2, 3), new=[4, -1])
def test_reshape(shape, new):
    x = _x(shape)
    kind, result = outcome(tf.reshape, tf.constant(x), new)
    try:
        valid = isinstance(new, list) and all(_is_int(d) and d >= -1 for d in new)
        valid = valid and sum(d == -1 for d in new) <= 1
        expected = np.reshape(x, new) if valid else None
    except ValueError:
        expected = None
    if expected is None:
        assert kind == "raised", f"reshape({shape}, {new!r}) gave {result}"
        return
    assert kind == "ok", result
    np.testing.assert_array_equal(result.numpy(), expected)


@budget(40)
@given(
    shape=SHAPES,
    perm=st.one_of(st.permutations([0, 1, 2]), st.lists(st.integers(-3, 3), max_size=3), ODD),
)
@example(shape=(2, 3), perm=[0, 0])
@example(shape=(2, 3), perm=[1, -2])
@example(shape=(1,), perm=[1])  # was taken as [0]; TF: out of bounds
@example(shape=(1,), perm=[[0]])  # a nested list was flattened; TF: a vector
def test_transpose(shape, perm):
    x = _x(shape)
    kind, result = outcome(tf.transpose, tf.constant(x), perm)
    rank = len(shape)
    if perm is None:  # TF: the axes reversed
        perm = list(range(rank))[::-1]
    valid = isinstance(perm, list) and all(_is_int(p) for p in perm) and len(perm) == rank
    valid = valid and sorted(p % rank for p in perm) == list(range(rank))
    valid = valid and all(-rank <= p < rank for p in perm)
    if not valid:
        assert kind == "raised", f"transpose({shape}, {perm!r}) gave {result}"
        return
    assert kind == "ok", result
    np.testing.assert_array_equal(result.numpy(), np.transpose(x, perm))


@budget(40)
@given(
    shape=st.lists(st.integers(1, 2), min_size=1, max_size=3).map(tuple),
    axis=st.one_of(st.none(), st.integers(-4, 4), st.lists(st.integers(-3, 3), max_size=2), ODD),
)
@example(shape=(2, 1), axis=0)
@example(shape=(1, 1), axis=[0, 0])  # as TF: dimension 0 squeezed once
@example(shape=(1,), axis=[[0]])  # a nested list was flattened
def test_squeeze(shape, axis):
    x = _x(shape)
    kind, result = outcome(tf.squeeze, tf.constant(x), axis)
    if axis is None:
        expected = np.squeeze(x)
    else:
        items = axis if isinstance(axis, list) else [axis]
        rank = len(shape)
        ok = all(_is_int(a) and -rank <= a < rank for a in items)
        # TF squeezes a dimension named twice once
        ok = ok and all(shape[a % rank] == 1 for a in items)
        expected = np.squeeze(x, tuple({a % rank for a in items})) if ok else None
    if expected is None:
        assert kind == "raised", f"squeeze({shape}, {axis!r}) gave {result}"
        return
    assert kind == "ok", result
    np.testing.assert_array_equal(result.numpy(), expected)


@budget(40)
@given(shape=SHAPES, axis=st.one_of(st.integers(-4, 4), ODD))
@example(shape=(2, 3), axis=2)
def test_argmax(shape, axis):
    x = _x(shape) % 3
    kind, result = outcome(tf.argmax, tf.constant(x), axis=axis)
    rank = len(shape)
    if axis is None:  # TF: axis None means 0
        axis_value = 0
    else:
        axis_value = axis if _is_int(axis) and -rank <= axis < rank else None
    if axis_value is None:
        assert kind == "raised", f"argmax({shape}, axis={axis!r}) gave {result}"
        return
    assert kind == "ok", result
    np.testing.assert_array_equal(result.numpy(), np.argmax(x, axis=axis_value))


@budget(40)
@given(
    size=st.integers(1, 4),
    indices=st.one_of(
        st.lists(st.integers(-2, 6), max_size=4), st.sampled_from([[1.5], ["0"], [[0, 1]]])
    ),
)
@example(size=3, indices=[3])
@example(size=3, indices=[-1])
def test_gather(size, indices):
    x = np.arange(size, dtype=np.float32) * 10
    kind, result = outcome(tf.gather, tf.constant(x), indices)
    flat = np.asarray(indices, dtype=object).reshape(-1) if indices else []
    # [] is a float32 list to TF too: refused (InvalidArgumentError, as TF)
    valid = bool(indices) and all(_is_int(i) and 0 <= i < size for i in flat)
    if not valid:  # TF on CPU refuses an index out of [0, size), negative ones too
        assert kind == "raised", f"gather(size {size}, {indices!r}) gave {result}"
        return
    assert kind == "ok", result
    np.testing.assert_array_equal(result.numpy(), x[np.asarray(indices, dtype=np.int64)])


@budget(40)
@given(
    length=st.integers(0, 6),
    splits=st.one_of(
        st.integers(-1, 4),
        st.lists(st.integers(-1, 4), max_size=3),
        st.sampled_from([1.5, "2", None]),
    ),
)
@example(length=4, splits=0)
@example(length=4, splits=[2, -1])
@example(length=5, splits=2)
@example(length=0, splits=[])  # was [x]; TF: num_split must be at least 1
@example(length=2, splits=1.5)  # was taken as 1
def test_split(length, splits):
    x = np.arange(length, dtype=np.float32)
    kind, result = outcome(tf.split, tf.constant(x), splits)
    expected = None
    if _is_int(splits) and splits >= 1 and length % splits == 0:
        expected = np.split(x, splits)
    elif isinstance(splits, list) and splits and all(_is_int(s) and s >= -1 for s in splits):
        unknown = [i for i, s in enumerate(splits) if s == -1]
        known = sum(s for s in splits if s != -1)
        if len(unknown) <= 1 and (known <= length if unknown else known == length):
            sizes = [length - known if s == -1 else s for s in splits]
            expected = np.split(x, np.cumsum(sizes)[:-1])
    if expected is None:
        assert kind == "raised", f"split({length}, {splits!r}) gave {result}"
        return
    assert kind == "ok", result
    assert [r.numpy().tolist() for r in result] == [e.tolist() for e in expected]


@budget(40)
@given(
    indices=st.lists(st.integers(-2, 5), max_size=4),
    depth=st.one_of(st.integers(-1, 5), st.sampled_from([2.5, "3", None])),
)
@example(indices=[0, 1], depth=0)
@example(indices=[0, 1], depth=-1)
@example(indices=[0], depth=2.5)  # was taken as 2; TF: TypeError
@example(indices=[], depth=0)  # was a TypeError; TF: shape (0, 0)
def test_one_hot(indices, depth):
    kind, result = outcome(tf.one_hot, indices, depth)
    if not (_is_int(depth) and depth >= 0):
        assert kind == "raised", f"one_hot({indices}, depth={depth!r}) gave {result}"
        return
    assert kind == "ok", result
    expected = np.zeros((len(indices), depth), np.float32)
    for row, i in enumerate(indices):
        if 0 <= i < depth:  # TF: an index outside [0, depth) is a row of zeros
            expected[row, i] = 1
    np.testing.assert_array_equal(result.numpy(), expected)
