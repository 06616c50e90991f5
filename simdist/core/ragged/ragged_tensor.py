"""``tf.RaggedTensor``: rows of different lengths, as ``values`` cut by int64 ``row_splits``.

A ragged tensor of ragged rank 1 is a dense ``values`` tensor (its first dimension runs over
every item of every row) and ``row_splits``, ``nrows + 1`` ascending int64 offsets: row ``i``
is ``values[row_splits[i]:row_splits[i + 1]]``. A ragged rank above 1 nests: ``values`` is
itself a RaggedTensor; ``flat_values`` is the dense tensor at the bottom and
``nested_row_splits`` the splits from the outside in::

    [[1, 2], [3], []]   values [1, 2, 3], row_splits [0, 2, 3, 3]

Every derived view is an op on ``values`` (a slice, a gather, a concat), so gradients reach
the values through the tape wherever TF gives them (elementwise math, indexing, ``to_tensor``).
The row partition itself carries no gradient (it is integer). Operators, indexing and the
reductions live in ``ragged_ops``; this module holds the type, its factories and conversions.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.shape import TensorShape
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["RaggedTensor", "is_ragged"]


def is_ragged(value) -> bool:
    """True for a RaggedTensor (the check the dense ops use to dispatch)."""
    return isinstance(value, RaggedTensor)


def _splits_tensor(value, what: str) -> Tensor:
    if isinstance(value, Tensor) or hasattr(value, "_to_tensor"):
        array = convert_to_tensor(value)._value
    else:
        array = np.asarray(value)
    if array.size == 0:  # [] is an empty int64 vector here, not float32
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{what} must be an integer tensor, got dtype {array.dtype}.")
    if array.ndim != 1:
        raise ValueError(f"{what} must be a vector (rank 1), got shape {list(array.shape)}.")
    return make_tensor(array.astype(np.int64))


def _as_values(values):
    return values if isinstance(values, RaggedTensor) else convert_to_tensor(values)


class RaggedTensor:
    """A tensor whose rows have different lengths (TF's ``tf.RaggedTensor``).

    >>> import simdist as tf
    >>> rt = tf.RaggedTensor.from_row_splits([1, 2, 3], row_splits=[0, 2, 3, 3])
    >>> rt
    <tf.RaggedTensor [[1, 2], [3], []]>
    >>> rt.shape, rt.row_lengths().numpy().tolist()
    (TensorShape([3, None]), [2, 1, 0])
    """

    __slots__ = ("_values", "_row_splits", "__weakref__")
    _is_ragged = True  # what the dense ops check to dispatch here (no import needed)
    __array_priority__ = 110  # NumPy defers `ndarray + rt` to RaggedTensor.__radd__

    def __init__(self, values, row_splits: Tensor, internal: bool = False) -> None:
        if not internal:
            raise ValueError(
                "RaggedTensor constructor is private; please use one of the factory methods "
                "instead (e.g., RaggedTensor.from_row_lengths())"
            )
        self._values = values
        self._row_splits = row_splits

    # --- factories ------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True) -> RaggedTensor:
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``.

        Raises:
            InvalidArgumentError: the splits are empty, do not start at 0, decrease, or do
                not end at the number of values.
        """
        values = _as_values(values)
        splits = _splits_tensor(row_splits, "row_splits")
        if validate:
            s = splits._value
            nvals = _nvals(values)
            if s.size == 0 or s[0] != 0:
                raise errors.InvalidArgumentError(
                    f"Arguments to from_row_splits do not form a valid RaggedTensor: zero: "
                    f"row_splits must start at 0, got {s.tolist()}."
                )
            if np.any(np.diff(s) < 0):
                raise errors.InvalidArgumentError(
                    f"Arguments to from_row_splits do not form a valid RaggedTensor: monotonic: "
                    f"row_splits must be sorted in ascending order, got {s.tolist()}."
                )
            if s[-1] != nvals:
                raise errors.InvalidArgumentError(
                    f"Arguments to from_row_splits do not form a valid RaggedTensor: "
                    f"row_splits[-1] ({s[-1]}) must equal the number of values ({nvals})."
                )
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True) -> RaggedTensor:
        """Row ``i`` takes the next ``row_lengths[i]`` values.

        Raises:
            InvalidArgumentError: a negative length, or lengths that do not add up to the
                number of values.
        """
        lengths = _splits_tensor(row_lengths, "row_lengths")._value
        if validate and np.any(lengths < 0):
            raise errors.InvalidArgumentError(
                f"Arguments to from_row_lengths do not form a valid RaggedTensor: row_lengths "
                f"must be non-negative, got {lengths.tolist()}."
            )
        values = _as_values(values)
        if validate and int(lengths.sum()) != _nvals(values):
            raise errors.InvalidArgumentError(
                f"Arguments to from_row_lengths do not form a valid RaggedTensor: the row "
                f"lengths add up to {int(lengths.sum())}, but there are {_nvals(values)} values."
            )
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(values, make_tensor(splits), internal=True)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Value ``j`` goes in row ``value_rowids[j]`` (sorted); ``nrows`` adds empty rows.

        Raises:
            InvalidArgumentError: the rowids are negative, unsorted, or not below ``nrows``.
        """
        rowids = _splits_tensor(value_rowids, "value_rowids")._value
        values = _as_values(values)
        if validate:
            if rowids.size != _nvals(values):
                raise errors.InvalidArgumentError(
                    f"Arguments to from_value_rowids do not form a valid RaggedTensor: there "
                    f"are {rowids.size} value_rowids for {_nvals(values)} values."
                )
            if np.any(rowids < 0) or np.any(np.diff(rowids) < 0):
                raise errors.InvalidArgumentError(
                    "Arguments to from_value_rowids do not form a valid RaggedTensor: "
                    f"value_rowids must be non-negative and sorted, got {rowids.tolist()}."
                )
        count = int(rowids[-1]) + 1 if rowids.size else 0
        if nrows is not None:
            nrows = int(np.asarray(getattr(nrows, "_value", nrows)))
            if validate and nrows < count:
                raise errors.InvalidArgumentError(
                    f"Arguments to from_value_rowids do not form a valid RaggedTensor: nrows "
                    f"({nrows}) must be greater than the largest value_rowid ({count - 1})."
                )
            count = nrows
        lengths = np.bincount(rowids, minlength=count) if rowids.size else np.zeros(count, int)
        return cls.from_row_lengths(values, lengths, validate=False)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        """Splits applied from the inside out: ``nested_row_splits[0]`` is the outermost."""
        if isinstance(nested_row_splits, Tensor) or (
            len(nested_row_splits) and np.ndim(nested_row_splits[0]) == 0
        ):
            raise TypeError("nested_row_splits must be a list of Tensors")
        result = _as_values(flat_values)
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        """Lengths applied from the inside out: ``nested_row_lengths[0]`` is the outermost."""
        result = _as_values(flat_values)
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_tensor(
        cls,
        tensor,
        lengths=None,
        padding=None,
        ragged_rank=1,
        name=None,
        row_splits_dtype=dtypes.int64,
    ) -> RaggedTensor:
        """Rows of a dense ``tensor``: whole, cut to ``lengths``, or with trailing ``padding``
        dropped (a row's trailing items equal to ``padding`` are not kept).

        Raises:
            ValueError: both ``lengths`` and ``padding``; a rank below 2; ``ragged_rank``
                other than 1 to ``rank - 1``.
        """
        from simdist.core.ragged import ragged_to_dense

        return ragged_to_dense.from_tensor(tensor, lengths, padding, ragged_rank)

    # --- what it is ------------------------------------------------------------------
    @property
    def values(self):
        """The concatenated rows (a Tensor, or a RaggedTensor for ragged rank > 1)."""
        return self._values

    @property
    def row_splits(self) -> Tensor:
        return self._row_splits

    @property
    def flat_values(self) -> Tensor:
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values._values
        return values

    @property
    def nested_row_splits(self) -> tuple[Tensor, ...]:
        out, current = [], self
        while isinstance(current, RaggedTensor):
            out.append(current._row_splits)
            current = current._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> dtypes.DType:
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return dtypes.int64

    @property
    def shape(self) -> TensorShape:
        """``[nrows, None, ...]``: a None for each ragged dimension, then the flat values'."""
        inner = list(self.flat_values.shape)[1:]
        return TensorShape([self._nrows(), *([None] * self.ragged_rank), *inner])

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return self.shape.rank

    @property
    def device(self) -> str:
        return self.flat_values.device

    def _nrows(self) -> int:
        return int(self._row_splits._value.shape[0]) - 1

    def nrows(self, out_type=None, name=None) -> Tensor:
        return make_tensor(np.asarray(self._nrows()), out_type or dtypes.int64)

    def row_starts(self, name=None) -> Tensor:
        return make_tensor(self._row_splits._value[:-1])

    def row_limits(self, name=None) -> Tensor:
        return make_tensor(self._row_splits._value[1:])

    def row_lengths(self, axis=1, name=None):
        """The length of each row (``axis=1``) or, deeper, of each row's rows (ragged)."""
        if axis == 0:
            return self.nrows()
        if axis == 1:
            return make_tensor(np.diff(self._row_splits._value))
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.row_lengths(axis - 1))
        raise ValueError(f"axis={axis} is out of bounds for a ragged tensor of rank {self.ndim}.")

    def value_rowids(self, name=None) -> Tensor:
        lengths = np.diff(self._row_splits._value)
        return make_tensor(np.repeat(np.arange(lengths.size, dtype=np.int64), lengths))

    def nested_row_lengths(self, name=None) -> tuple[Tensor, ...]:
        return tuple(make_tensor(np.diff(s._value)) for s in self.nested_row_splits)

    def bounding_shape(self, axis=None, name=None, out_type=None) -> Tensor:
        """The smallest dense shape that holds every row (what ``to_tensor`` pads to)."""
        dims, current = [self._nrows()], self
        while isinstance(current, RaggedTensor):
            lengths = np.diff(current._row_splits._value)
            dims.append(int(lengths.max()) if lengths.size else 0)
            current = current._values
        dims += list(current._value.shape[1:])
        shape = np.asarray(dims, np.int64)
        return make_tensor(shape if axis is None else shape[axis], out_type or dtypes.int64)

    def merge_dims(self, outer_axis, inner_axis) -> RaggedTensor | Tensor:
        """Dimensions ``outer_axis..inner_axis`` merged into one (their rows concatenated).

        Raises:
            ValueError: axes out of order or out of range, or an inner axis past the
                ragged dimensions (dense inner dimensions stay as they are in simdist).
        """
        rank = self.shape.rank
        outer, inner = (a % rank if -rank <= a < rank else rank for a in (outer_axis, inner_axis))
        if outer >= rank or inner >= rank or outer > inner:
            raise ValueError(
                f"Expected 0 <= outer_axis <= inner_axis < {rank}, got outer_axis="
                f"{outer_axis}, inner_axis={inner_axis}."
            )
        if outer == inner:
            return self
        if inner > self.ragged_rank:
            raise ValueError("simdist merges ragged dimensions only (docs/differences.md).")
        if outer == 0:  # the values are the rows of rows, merged
            merged = self._values
            return merged if inner == 1 else merged.merge_dims(0, inner - 1)
        if outer == 1:  # each row's rows joined: the two splits composed
            rows = self._values
            composed = rows._row_splits._value[self._row_splits._value]
            merged = RaggedTensor(rows._values, make_tensor(composed), internal=True)
            return merged if inner == 2 else merged.merge_dims(1, inner - 1)
        return self.with_values(self._values.merge_dims(outer - 1, inner - 1))

    def with_values(self, new_values) -> RaggedTensor:
        return RaggedTensor(_as_values(new_values), self._row_splits, internal=True)

    def with_flat_values(self, new_values) -> RaggedTensor:
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype) -> RaggedTensor:
        if dtypes.as_dtype(dtype) not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"dtype must be int32 or int64, got {dtype}.")
        return self  # simdist keeps int64 splits (docs/differences.md)

    # --- conversions -----------------------------------------------------------------
    def to_list(self) -> list:
        """Nested Python lists (strings as bytes), as TF's ``to_list``."""
        inner = (
            self._values.to_list()
            if isinstance(self._values, RaggedTensor)
            else (self._values._value.tolist())
        )
        s = self._row_splits._value.tolist()
        return [inner[s[i] : s[i + 1]] for i in range(len(s) - 1)]

    def numpy(self) -> np.ndarray:
        """Rows as NumPy arrays: one array when the rows have equal lengths, else an object
        array of rows (TF's rule)."""
        values = (
            self._values.numpy()
            if isinstance(self._values, RaggedTensor)
            else (self._values._value.copy())
        )
        s = self._row_splits._value.tolist()
        rows = [values[s[i] : s[i + 1]] for i in range(len(s) - 1)]
        if not rows:
            return np.zeros((0, 0, *values.shape[1:]), dtype=values.dtype)
        variable = any(len(r) != len(rows[0]) for r in rows)
        return np.array(rows, dtype=object if variable else None)

    def to_tensor(self, default_value=None, name=None, shape=None) -> Tensor:
        """A dense tensor, rows padded with ``default_value`` (0, or b"" for strings) to the
        bounding shape, or cut or padded to ``shape`` (None entries: the bounding size).
        Differentiable in the values.
        """
        from simdist.core.ragged import ragged_to_dense

        return ragged_to_dense.to_tensor(self, default_value, shape)

    def _reduce(self, kind: str, axis, keepdims: bool):
        """What ``tf.reduce_<kind>(rt, axis)`` dispatches to (see ``ragged_math.reduce``)."""
        from simdist.core.ragged import ragged_math

        return ragged_math.reduce(kind, self, axis, keepdims)

    # --- Python protocol -------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<tf.RaggedTensor {_text(self.numpy())}>"

    __str__ = __repr__

    def __iter__(self):
        return (self[i] for i in range(self._nrows()))

    def __hash__(self) -> int:
        raise TypeError("RaggedTensor is unhashable. Instead, use tensor.ref() as the key.")

    def __bool__(self) -> bool:
        raise TypeError("The truth value of a RaggedTensor is ambiguous.")

    def __reduce__(self):
        return RaggedTensor.from_nested_row_splits, (
            self.flat_values,
            list(self.nested_row_splits),
            None,
            False,
        )


def _nvals(values) -> int:
    if isinstance(values, RaggedTensor):
        return values._nrows()
    if values.ndim == 0:
        raise ValueError("values must have rank >= 1 (a scalar has no rows to split).")
    return int(values._value.shape[0])


def _text(array: np.ndarray) -> str:
    """NumPy's text of ``array`` with ", " between items, at every depth (TF's repr)."""

    def item(x):
        if isinstance(x, np.ndarray):
            if x.size == 0:
                return repr(x.tolist())
            with np.printoptions(formatter={"all": item}):
                return np.array2string(x, separator=", ")
        return str(x)

    with np.printoptions(formatter={"all": item}):
        return item(array)
