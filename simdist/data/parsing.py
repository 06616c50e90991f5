"""``tf.io.parse_example`` and ``tf.io.parse_single_example``.

Each serialized ``Example`` is read from the wire (:mod:`simdist.data.example_wire`) into
``{name: (kind, values)}``; each requested feature is then checked and shaped by its spec
(:mod:`simdist.data.parsing_config`). A ``Feature`` with no list set counts as missing. The
result is a dict, sparse (``VarLenFeature``) keys first, then the dense ones, each group in
sorted order, as TF builds it.

A batch (``parse_example`` of a vector): ``FixedLenFeature`` values stack to
``[batch] + shape``; ``VarLenFeature`` values become one ``SparseTensor`` of
``dense_shape [batch, longest]`` (indices ``[example, position]``);
``FixedLenSequenceFeature`` rows are padded with ``default_value`` (0 or ``b""``) to the
longest.

Errors are TF 2.21's, whose wording depends on the input: a scalar goes through TF's
single-example parser (``"Key: x.  ..."``), a vector through the batch parser
(``"Name: <unknown>, Key: x, Index: 3.  ..."``). ``InvalidArgumentError`` for a required
feature that is missing, values of another type, a count that does not fit the shape, and a
string that is not an ``Example``; ``ValueError`` for specs TF refuses before parsing.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.sparse import SparseTensor
from simdist.core.tensor import Tensor, make_tensor
from simdist.data.example_wire import read_example
from simdist.data.parsing_config import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    check_dtype,
    kind_name,
    shape_text,
    spec_shape,
)

__all__ = ["parse_example", "parse_single_example"]

_LIST_NAMES = {"float": "float", "int64": "int64", "string": "bytes"}  # float_list, ...


class Where(NamedTuple):
    """Which example of a parse a check is about, for TF's two wordings of its errors."""

    name: str
    index: int
    batched: bool

    def key(self, key: str) -> str:
        if self.batched:
            return f"Name: {self.name}, Key: {key}, Index: {self.index}."
        return f"Key: {key}."


def array_of(values: list, dtype: dtypes.DType) -> np.ndarray:
    """A 1-D array of ``values`` (strings: an object array of bytes)."""
    if dtype == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, dtype=dtype.as_numpy_dtype).reshape(len(values))


def _default(spec: Any, key: str, count: int | None = None) -> np.ndarray:
    """``spec.default_value`` as an array of ``spec``'s shape (``count`` values for a
    sequence feature's padding: one)."""
    dtype = check_dtype(spec)
    value = spec.default_value
    if isinstance(value, Tensor):
        value = value.numpy()
    raw = np.asarray(value, dtype=object)
    flat = [v.encode("utf-8") if isinstance(v, str) else v for v in raw.reshape(-1).tolist()]
    if dtype == dtypes.int64 and any(isinstance(v, float) and v != int(v) for v in flat):
        bad = next(v for v in flat if isinstance(v, float) and v != int(v))
        raise TypeError(f"Cannot convert {bad} to EagerTensor of dtype int64")
    array = array_of(flat, dtype)
    shape = [1] if count == 1 else spec_shape(spec, key).as_list()
    wanted = int(np.prod(shape, dtype=np.int64))
    if array.size != wanted:
        raise errors.InvalidArgumentError(
            f"Input to reshape is a tensor with {array.size} values, but the requested shape "
            f"has {wanted}"
        )
    return array.reshape(shape)


def _check_dense_kind(found: str, spec: Any, key: str, where: Where) -> None:
    expected = kind_name(check_dtype(spec))
    if found != expected:
        raise errors.InvalidArgumentError(
            f"{where.key(key)}  Data types don't match. Data type: {found} but expected type: "
            f"{expected}"
        )


def _missing(spec: Any, key: str, where: Where) -> errors.InvalidArgumentError:
    prefix = f"Name: {where.name}, " if where.batched else ""
    return errors.InvalidArgumentError(
        f"{prefix}Feature: {key} (data type: {kind_name(check_dtype(spec))}) is required but "
        "could not be found."
    )


def dense_value(spec: FixedLenFeature, key: str, found, where: Where) -> np.ndarray:
    """A ``FixedLenFeature``'s array for one example (``found``: its ``(kind, values)`` or
    None)."""
    dtype = check_dtype(spec)
    shape = spec_shape(spec, key)
    if found is None or found[0] is None:
        if spec.default_value is None:
            raise _missing(spec, key, where)
        return _default(spec, key)
    _check_dense_kind(found[0], spec, key, where)
    values, wanted = found[1], shape.num_elements()
    if len(values) != wanted:
        name = _LIST_NAMES[found[0]]
        if not where.batched:
            detail = (
                "Parsing bytes_list failed."
                if name == "bytes" and len(values) > wanted
                else f"Some {name}_list slice was not parsed."
            )
            raise errors.InvalidArgumentError(
                f"{where.key(key)}  Can't parse serialized Example: {detail}"
            )
        if name == "bytes" and len(values) > wanted:
            raise errors.InvalidArgumentError(f"{where.key(key)}  Can't parse serialized Example.")
        raise errors.InvalidArgumentError(
            f"{where.key(key)}  Number of {name} values != expected.  Values size: "
            f"{len(values)} but output shape: {shape_text(shape.as_list())}"
        )
    return array_of(values, dtype).reshape(shape.as_list())


def _rows(spec: FixedLenSequenceFeature, key: str, found, where: Where) -> np.ndarray:
    dtype = check_dtype(spec)
    shape = spec_shape(spec, key).as_list()
    stride = int(np.prod(shape, dtype=np.int64))
    if found is None or found[0] is None:
        return array_of([], dtype).reshape([0, *shape])
    _check_dense_kind(found[0], spec, key, where)
    values = found[1]
    if stride == 0 or len(values) % stride:
        if not where.batched:
            raise errors.InvalidArgumentError(
                f"Error while parsing feature with key {key}: number of elements should be "
                f"divisible by {stride}, found {len(values)} instead"
            )
        raise errors.InvalidArgumentError(
            f"{where.key(key)}  Number of {_LIST_NAMES[found[0]]} values is not a multiple of "
            f"stride length. Saw {len(values)} values but output shape is: "
            f"{shape_text(['?', *shape])}"
        )
    return array_of(values, dtype).reshape([len(values) // stride, *shape])


def sparse_values(spec: VarLenFeature, key: str, found, where: Where) -> np.ndarray:
    """A ``VarLenFeature``'s values for one example."""
    dtype = check_dtype(spec)
    if found is None or found[0] is None:
        return array_of([], dtype)
    expected = kind_name(dtype)
    if found[0] != expected:
        raise errors.InvalidArgumentError(
            f"{where.key(key)}  Data types don't match. Expected type: {expected}, Actual "
            f"type: {found[0]}"
        )
    return array_of(found[1], dtype)


# --- the batch -----------------------------------------------------------------------------
def serialized_strings(serialized, what: str = "serialized") -> np.ndarray:
    """``serialized`` (bytes, str, list, array or string tensor) as an object array of bytes.

    Raises:
        TypeError: an item is not a string.
    """
    value = serialized.numpy() if isinstance(serialized, Tensor) else serialized
    if isinstance(value, (bytes, str)):
        value = [value]
        scalar = True
    else:
        scalar = False
    array = np.asarray(value, dtype=object)
    flat = [v.encode("utf-8") if isinstance(v, str) else v for v in array.reshape(-1).tolist()]
    if any(not isinstance(v, bytes) for v in flat):
        raise TypeError(f"`{what}` must be strings (serialized protocol buffers).")
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(()) if scalar else out.reshape(array.shape)


def split_specs(features: Any, outer: str = "features") -> tuple[list, list]:
    """The sparse keys and the dense keys of ``features``, each sorted.

    Raises:
        ValueError: no features; a spec simdist does not parse; an unknown dimension.
        InvalidArgumentError: a dtype other than float32, int64, string.
    """
    if not features:
        raise ValueError(f"Invalid argument: {outer} cannot be empty.")
    sparse, dense = [], []
    for key in sorted(features):
        spec = features[key]
        if isinstance(spec, VarLenFeature):
            sparse.append(key)
        elif isinstance(spec, (FixedLenFeature, FixedLenSequenceFeature)):
            dense.append(key)
            spec_shape(spec, key)
        else:
            raise ValueError(
                f"Unsupported {type(spec).__name__} {spec} for key '{key}': simdist parses "
                "FixedLenFeature, VarLenFeature and FixedLenSequenceFeature."
            )
        check_dtype(spec, "sparse_types" if isinstance(spec, VarLenFeature) else "Tdense")
    return sparse, dense


def sparse_tensor(rows: list[np.ndarray], dtype: dtypes.DType, batched: bool) -> SparseTensor:
    """One example's values as a 1-D ``SparseTensor``, or a batch's as a 2-D one."""
    if not batched:
        values = rows[0]
        indices = np.arange(len(values), dtype=np.int64).reshape(-1, 1)
        return SparseTensor(indices, make_tensor(values, dtype=dtype), [len(values)])
    indices = np.array(
        [(b, j) for b, row in enumerate(rows) for j in range(len(row))], dtype=np.int64
    ).reshape(-1, 2)
    longest = max((len(r) for r in rows), default=0)
    values = array_of([v for row in rows for v in row.tolist()], dtype)
    return SparseTensor(indices, make_tensor(values, dtype=dtype), [len(rows), longest])


def _pad_rows(rows: list[np.ndarray], spec, key: str, dtype: dtypes.DType) -> np.ndarray:
    shape = spec_shape(spec, key).as_list()
    longest = max((len(r) for r in rows), default=0)
    if spec.default_value is None:
        fill = b"" if dtype == dtypes.string else 0
    else:
        fill = _default(spec, key, count=1)[0]
    out = np.empty(
        [len(rows), longest, *shape], dtype=object if dtype == dtypes.string else dtype._np
    )
    out[...] = fill
    for b, row in enumerate(rows):
        out[b, : len(row)] = row
    return out


def _parse(serialized: np.ndarray, features: dict, names: list[str], batched: bool) -> dict:
    sparse_keys, dense_keys = split_specs(features)
    for key in dense_keys:
        spec = features[key]
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            raise ValueError(
                "Unsupported: FixedLenSequenceFeature requires allow_missing to be True."
            )
        if spec.default_value is not None:
            _default(spec, key, count=1 if isinstance(spec, FixedLenSequenceFeature) else None)
    parsed = []
    for data in serialized.tolist():
        try:
            parsed.append(read_example(data))
        except errors.DataLossError:
            raise errors.InvalidArgumentError(
                f"Could not parse example input, value: '{data.decode('utf-8', 'replace')}'"
            ) from None
    wheres = [Where(n, i, batched) for i, n in enumerate(names)]
    out: dict = {}
    for key in sparse_keys:
        spec = features[key]
        pairs = zip(parsed, wheres, strict=True)
        rows = [sparse_values(spec, key, p.get(key), w) for p, w in pairs]
        out[key] = sparse_tensor(rows, check_dtype(spec), batched)
    for key in dense_keys:
        spec = features[key]
        dtype = check_dtype(spec)
        pairs = zip(parsed, wheres, strict=True)
        if isinstance(spec, FixedLenSequenceFeature):
            rows = [_rows(spec, key, p.get(key), w) for p, w in pairs]
            array = _pad_rows(rows, spec, key, dtype) if batched else rows[0]
        else:
            items = [dense_value(spec, key, p.get(key), w) for p, w in pairs]
            shape = spec_shape(spec, key).as_list()
            empty = np.empty([0, *shape], dtype=object if dtype == dtypes.string else dtype._np)
            array = (np.stack(items) if items else empty) if batched else items[0]
        out[key] = make_tensor(array, dtype=dtype)
    return out


def _names(example_names, count: int) -> list[str]:
    if example_names is None:
        return ["<unknown>"] * count
    names = serialized_strings(example_names, "example_names").reshape(-1).tolist()
    return [n.decode("utf-8", "replace") for n in names]


def parse_example(serialized, features: dict, example_names=None, name=None) -> dict:
    """Parse a batch (a vector of strings) of serialized ``Example`` s; a scalar is parsed
    as :func:`parse_single_example` does, as in TF.

    Args:
        serialized: a 1-D string tensor (or list) of serialized ``tf.train.Example`` s.
        features: ``{key: FixedLenFeature | VarLenFeature | FixedLenSequenceFeature}``.
        example_names: names of the examples, for error messages.

    Returns:
        ``{key: Tensor | SparseTensor}`` (see the module docstring).

    Raises:
        InvalidArgumentError: a required feature is missing, has the wrong type or size, a
            string is not a serialized ``Example``, or ``serialized`` has rank 2 or more.
        ValueError: an unsupported spec; an unknown dimension in a shape.
    """
    batch = serialized_strings(serialized)
    if batch.ndim == 0:
        return _parse(batch.reshape(1), features, ["<unknown>"], batched=False)
    if batch.ndim != 1:
        raise errors.InvalidArgumentError(
            "Expected serialized to be a scalar or vector, got shape: "
            f"{shape_text(list(batch.shape))}"
        )
    return _parse(batch, features, _names(example_names, len(batch)), batched=True)


def parse_single_example(serialized, features: dict, example_names=None, name=None) -> dict:
    """Parse one serialized ``Example`` (a scalar string).

    Returns:
        ``{key: Tensor | SparseTensor}``: FixedLen values in their shape, VarLen values as a
        1-D ``SparseTensor``, FixedLenSequence values as ``[rows] + shape``.

    Raises:
        InvalidArgumentError: as :func:`parse_example`.
        ValueError: as :func:`parse_example`; ``serialized`` is not a scalar.
    """
    single = serialized_strings(serialized)
    if single.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    return _parse(single.reshape(1), features, ["<unknown>"], batched=False)
