"""Ops on ragged tensors: ``tf.ragged.constant``, ``map_flat_values``, operators, indexing.

Elementwise math maps over ``flat_values`` (so it is differentiable there) and keeps the row
partition: with a scalar, a dense value that broadcasts to each item, or a ragged tensor
with the same ``nested_row_splits`` (TF's rule; other splits are an InvalidArgumentError).
Indexing ``rt[i]``, ``rt[a:b]``, ``rt[:, j]``, ``rt[:, a:b]`` gathers values, as TF does.
"""

from __future__ import annotations

import builtins

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ops import comparison_ops, math_ops, slicing_ops
from simdist.core.ops.array_ops import reshape
from simdist.core.ragged.ragged_tensor import RaggedTensor, is_ragged
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["constant", "map_flat_values", "getitem", "binary"]


# --- tf.ragged.constant --------------------------------------------------------------
def _depth(value) -> int:
    """Nesting depth of the deepest scalar (or empty list) in ``value``."""
    if isinstance(value, (list, tuple)):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, np.ndarray):
        return value.ndim
    return 0


def constant(
    pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=dtypes.int64
) -> RaggedTensor | Tensor:
    """A ragged tensor from nested Python lists (``tf.ragged.constant``).

    ``ragged_rank`` defaults to the nesting depth - 1 - ``len(inner_shape)``; the items below
    it must then have one uniform shape. ``ragged_rank=0`` gives a dense Tensor, as TF.

    Raises:
        ValueError: scalars at different depths, or items of different shapes below the
            ragged dimensions.
    """
    depth = _depth(pylist)
    if ragged_rank is None:
        ragged_rank = max(0, depth - 1 - (len(inner_shape) if inner_shape else 0))
    if ragged_rank < 0 or (0 < depth <= ragged_rank and not _all_empty(pylist)):
        raise ValueError(
            f"Invalid pylist={pylist!r}: its scalars are at depth {depth}, but "
            f"ragged_rank={ragged_rank} requires scalar value depth greater than {ragged_rank}"
        )
    if ragged_rank == 0:
        if _all_empty(pylist) and dtype is not None:  # [] of a given dtype
            return _flat_values([], dtype, np.shape(pylist)[1:], pylist)
        return convert_to_tensor(pylist, dtype=dtype)
    nested_splits: list[list[int]] = []
    level = list(pylist)
    for _ in builtins.range(ragged_rank):
        splits, nxt = [0], []
        for row in level:
            if not isinstance(row, (list, tuple, np.ndarray)):
                raise ValueError(
                    f"Invalid pylist={pylist!r}: all scalar values must have the same nesting depth"
                )
            for item in row:
                nxt.append(item)
            splits.append(len(nxt))
        nested_splits.append(splits)
        level = nxt
    # level: the items of the innermost ragged dimension (scalars or uniform lists)
    flat = _flat_values(level, dtype, inner_shape, pylist)
    return RaggedTensor.from_nested_row_splits(
        flat, [np.asarray(s, np.int64) for s in nested_splits], validate=False
    )


def _all_empty(value) -> bool:
    return isinstance(value, (list, tuple)) and all(_all_empty(v) for v in value)


def _flat_values(items: list, dtype, inner_shape, pylist) -> Tensor:
    if not items:
        shape = (0, *(inner_shape or ()))
        dt = dtypes.float32 if dtype is None else dtypes.as_dtype(dtype)
        if dt == dtypes.string:
            return make_tensor(np.empty(shape, dtype=object), dt)
        return make_tensor(np.zeros(shape, dt.as_numpy_dtype))
    depths = {_depth(i) for i in items}
    if len(depths) > 1:
        raise ValueError(
            f"Invalid pylist={pylist!r}: all scalar values must have the same nesting depth"
        )
    try:
        values = convert_to_tensor(items, dtype=dtype)
    except ValueError as exc:
        raise ValueError(
            f"Invalid pylist={pylist!r}: inner values must have a uniform shape below the "
            "ragged dimensions"
        ) from exc
    if values.dtype == dtypes.string or values._value.dtype == object:
        flat = [v.encode() if isinstance(v, str) else v for v in values._value.ravel().tolist()]
        array = np.empty(len(flat), dtype=object)
        array[:] = flat
        values = make_tensor(array.reshape(values._value.shape), dtypes.string)
    if inner_shape is not None and tuple(values._value.shape[1:]) != tuple(inner_shape):
        values = make_tensor(values._value.reshape((-1, *inner_shape)), values.dtype)
    return values


# --- map_flat_values -----------------------------------------------------------------
def map_flat_values(op, *args, **kwargs):
    """``op`` applied to the ``flat_values`` of every ragged argument; the result keeps
    their row partition (``tf.ragged.map_flat_values``).

    Raises:
        ValueError: no argument is ragged, ragged arguments have different row splits, or
            ``op`` changes the number of values.
    """
    partitions: list = []

    def unwrap(value):
        if is_ragged(value):
            partitions.append(value)
            return value.flat_values
        if isinstance(value, (list, tuple)):
            return type(value)(unwrap(v) for v in value)
        if isinstance(value, dict):
            return {k: unwrap(v) for k, v in value.items()}
        return value

    new_args = [unwrap(a) for a in args]
    new_kwargs = {k: unwrap(v) for k, v in kwargs.items()}
    if not partitions:
        return op(*args, **kwargs)
    first = partitions[0]
    for other in partitions[1:]:
        _check_same_splits(first, other, "map_flat_values")
    result = convert_to_tensor(op(*new_args, **new_kwargs))
    nvals = int(first.flat_values._value.shape[0])
    if result.ndim == 0 or int(result._value.shape[0]) != nvals:
        raise ValueError(
            f"tf.ragged.map_flat_values: the op's result has shape {list(result.shape)}; its "
            f"first dimension must be the number of values ({nvals}), to keep the rows."
        )
    return first.with_flat_values(result)


def _check_same_splits(a: RaggedTensor, b: RaggedTensor, what: str) -> None:
    sa, sb = a.nested_row_splits, b.nested_row_splits
    if len(sa) != len(sb) or any(
        x._value.shape != y._value.shape or np.any(x._value != y._value)
        for x, y in zip(sa, sb, strict=True)
    ):
        raise errors.InvalidArgumentError(
            f"{what}: Inputs must have identical ragged splits; got the row splits "
            f"{[s._value.tolist() for s in sa]} and {[s._value.tolist() for s in sb]}."
        )


# --- operators -----------------------------------------------------------------------
def binary(fn, x, y, name: str):
    """``fn(x, y)`` elementwise where either side is ragged (TF's ragged dispatch)."""
    if is_ragged(x) and is_ragged(y):
        _check_same_splits(x, y, name)
        return x.with_flat_values(fn(x.flat_values, y.flat_values))
    rt, other, ragged_first = (x, y, True) if is_ragged(x) else (y, x, False)
    other_t = (
        other
        if isinstance(other, Tensor)
        else convert_to_tensor(
            other, dtype=rt.dtype if not isinstance(other, (np.ndarray,)) else None
        )
    )
    inner_rank = rt.flat_values.ndim - 1
    if other_t.ndim > inner_rank:
        other_t = _rows_to_values(rt, other_t, name)
    flat = rt.flat_values
    out = fn(flat, other_t) if ragged_first else fn(other_t, flat)
    return rt.with_flat_values(out)


def _rows_to_values(rt: RaggedTensor, dense: Tensor, name: str) -> Tensor:
    """A dense operand that broadcasts over the rows (``[nrows or 1, 1, ...]``, NumPy's rule
    with the ragged dimension of size 1), as one item per value (a differentiable gather)."""
    shape = [1] * (rt.shape.rank - dense.ndim) + list(dense._value.shape)
    nrows = rt._nrows()
    if (
        rt.ragged_rank != 1
        or len(shape) != rt.shape.rank
        or shape[1] != 1
        or (shape[0] not in (1, nrows))
    ):
        raise errors.InvalidArgumentError(
            f"{name}: a dense operand of shape {list(dense.shape)} does not broadcast against "
            f"a ragged tensor of shape {rt.shape}: it needs size 1 in the ragged dimension and "
            f"1 or {nrows} rows (or densify with rt.to_tensor()) (docs/differences.md)."
        )
    rows = reshape(dense, [shape[0], *shape[2:]])
    if shape[0] == 1:
        return rows
    return slicing_ops.gather(rows, rt.value_rowids())


def _install() -> None:
    ops = {
        "add": math_ops.add, "sub": math_ops.subtract, "mul": math_ops.multiply,
        "truediv": math_ops.divide, "floordiv": math_ops.floordiv, "mod": math_ops.floormod,
        "pow": math_ops.pow, "and": comparison_ops.and_, "or": comparison_ops.or_,
        "xor": comparison_ops.xor_,
    }  # fmt: skip
    compares = {
        "lt": math_ops.less,
        "le": math_ops.less_equal,
        "gt": math_ops.greater,
        "ge": math_ops.greater_equal,
    }
    for op_name, fn in {**ops, **compares}.items():

        def forward(self, other, fn=fn, op_name=op_name):
            return binary(fn, self, other, op_name)

        def backward(self, other, fn=fn, op_name=op_name):
            return binary(fn, other, self, op_name)

        setattr(RaggedTensor, f"__{op_name}__", forward)
        if op_name in ops:
            setattr(RaggedTensor, f"__r{op_name}__", backward)
    RaggedTensor.__neg__ = lambda self: self.with_flat_values(math_ops.negative(self.flat_values))
    RaggedTensor.__abs__ = lambda self: self.with_flat_values(math_ops.abs(self.flat_values))
    RaggedTensor.__invert__ = lambda self: self.with_flat_values(
        comparison_ops.invert_(self.flat_values)
    )
    RaggedTensor.__getitem__ = getitem


# --- indexing --------------------------------------------------------------------------
def _row_range(rt: RaggedTensor, start: int, stop: int):
    """Rows ``start:stop`` (non-negative, clipped) of ``rt``."""
    splits = rt.row_splits._value
    lo, hi = int(splits[start]), int(splits[stop])
    values = _take_rows(rt.values, lo, hi)
    return RaggedTensor(values, make_tensor(splits[start : stop + 1] - lo), internal=True)


def _take_rows(values, lo: int, hi: int):
    if is_ragged(values):
        return _row_range(values, lo, hi)
    return slicing_ops.getitem(values, builtins.slice(lo, hi))


def _gather_rows(values, index: np.ndarray):
    if is_ragged(values):
        splits = values.row_splits._value
        lengths = np.diff(splits)[index]
        inner = np.concatenate(
            [np.arange(splits[i], splits[i + 1]) for i in index] or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        return RaggedTensor.from_row_lengths(
            _gather_rows(values.values, inner), lengths, validate=False
        )
    return slicing_ops.gather(values, make_tensor(index.astype(np.int64)))


def getitem(rt: RaggedTensor, key):
    """``rt[key]``: an int or a slice per dimension, ``...`` and ``tf.newaxis`` excepted.

    Raises:
        IndexError: a row index out of range (as TF).
        ValueError: an int index into a ragged dimension (``rt[:, j]``), as TF.
        TypeError: an index kind simdist does not support on ragged tensors.
    """
    key = key if isinstance(key, tuple) else (key,)
    if not key:
        return rt
    first, rest = key[0], key[1:]
    nrows = rt._nrows()
    if isinstance(first, builtins.slice):
        start, stop, step = first.indices(nrows)
        if step != 1:
            index = np.arange(start, stop, step)
            sliced = RaggedTensor.from_row_lengths(
                _gather_rows(rt.values, _row_items(rt, index)),
                np.diff(rt.row_splits._value)[index],
                validate=False,
            )
        else:
            sliced = _row_range(rt, start, builtins.max(start, stop))
        return _inner_getitem(sliced, rest) if rest else sliced
    index = _as_index(first)
    if not -nrows <= index < nrows:
        raise IndexError(
            f"slice index {index} of dimension 0 out of bounds (the ragged tensor has {nrows} "
            "rows)."
        )
    index %= nrows
    splits = rt.row_splits._value
    row = _take_rows(rt.values, int(splits[index]), int(splits[index + 1]))
    if not rest:
        return row
    return getitem(row, rest) if is_ragged(row) else slicing_ops.getitem(row, rest)


def _row_items(rt: RaggedTensor, rows: np.ndarray) -> np.ndarray:
    splits = rt.row_splits._value
    return np.concatenate(
        [np.arange(splits[r], splits[r + 1]) for r in rows] or [np.zeros(0, np.int64)]
    ).astype(np.int64)


def _as_index(value) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, Tensor) and value.dtype.is_integer and value.ndim == 0:
        return int(value._value)
    raise TypeError(
        f"Ragged tensors support int and slice indices (and `:` for whole dimensions); got "
        f"{value!r}."
    )


def _inner_getitem(rt: RaggedTensor, key: tuple):
    """``rt[:, key...]``: index every row's items (the ragged dimension first)."""
    first, rest = key[0], key[1:]
    splits = rt.row_splits._value
    lengths = np.diff(splits)
    if isinstance(first, builtins.slice):
        picks, new_lengths = [], []
        for row, length in enumerate(lengths):
            cols = np.arange(*first.indices(int(length)))
            picks.append(splits[row] + cols)
            new_lengths.append(cols.size)
        index = np.concatenate(picks or [np.zeros(0, np.int64)]).astype(np.int64)
        values = _gather_rows(rt.values, index)
        if rest:
            values = (
                getitem(values, (builtins.slice(None), *rest))
                if is_ragged(values)
                else (slicing_ops.getitem(values, (builtins.slice(None), *rest)))
            )
        return RaggedTensor.from_row_lengths(values, np.asarray(new_lengths), validate=False)
    _as_index(first)
    raise ValueError(
        "Cannot index into an inner ragged dimension. (TF's rule: rt[:, j] would need every "
        "row to have a j-th item; slice instead, rt[:, j:j + 1], or densify with to_tensor.)"
    )


_install()
