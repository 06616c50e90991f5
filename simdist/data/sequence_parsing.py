"""``tf.io.parse_single_sequence_example``: a ``SequenceExample``'s context and feature lists.

The context holds ``FixedLenFeature`` s and ``VarLenFeature`` s, parsed as an ``Example``'s
features are. Each feature list holds one ``Feature`` per step:

* ``FixedLenSequenceFeature(shape, dtype)``: every step has ``prod(shape)`` values; the
  result is ``[steps] + shape``. A missing list is an error, or ``[0] + shape`` with
  ``allow_missing=True``;
* ``VarLenFeature(dtype)``: a ``SparseTensor`` of ``dense_shape [steps, longest]``, indices
  ``[step, position]``.

A step whose ``Feature`` has no list set has no values. Errors are TF 2.21's (its
sequence-example parser words them its own way: ``"Context feature: c."``, ``"Feature
list: s, Index: 1."``, "Inconsistent max number of elements" for a context value count).
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core.sparse import SparseTensor
from simdist.core.tensor import make_tensor
from simdist.data import parsing
from simdist.data.example_wire import read_sequence_example
from simdist.data.parsing_config import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    check_dtype,
    kind_name,
    shape_text,
    spec_shape,
)

__all__ = ["parse_single_sequence_example"]


def _step_values(spec, key: str, found, label: str, step: int) -> list:
    kind, values = found
    expected = kind_name(check_dtype(spec))
    if kind is not None and kind != expected:
        raise errors.InvalidArgumentError(
            f"Name: {label}, Feature list: {key}, Index: {step}.  Data types don't match. "
            f"Expected type: {expected}"
        )
    return values


def _sequence(spec, key: str, steps, label: str):
    dtype = check_dtype(spec)
    if isinstance(spec, VarLenFeature):
        rows = [_step_values(spec, key, s, label, t) for t, s in enumerate(steps or [])]
        indices = np.array(
            [(t, j) for t, row in enumerate(rows) for j in range(len(row))], dtype=np.int64
        ).reshape(-1, 2)
        flat = parsing.array_of([v for row in rows for v in row], dtype)
        longest = max((len(r) for r in rows), default=0)
        return SparseTensor(indices, make_tensor(flat, dtype=dtype), [len(rows), longest])
    shape = spec_shape(spec, key).as_list()
    if steps is None:
        if not spec.allow_missing:
            raise errors.InvalidArgumentError(
                f"Name: {label}, Feature list '{key}' is required but could not be found.  "
                "Did you mean to include it in feature_list_dense_missing_assumed_empty or "
                "feature_list_dense_defaults?"
            )
        steps = []
    rows = [_step_values(spec, key, s, label, t) for t, s in enumerate(steps)]
    stride = int(np.prod(shape, dtype=np.int64))
    total = sum(len(r) for r in rows)
    if (stride == 0 and total) or (stride and total % stride):
        raise errors.InvalidArgumentError(
            f"Feature list '{key}' has an unexpected number of values.  Total values size: "
            f"{total} is not consistent with output shape: {shape_text(['?', *shape])}"
        )
    for t, row in enumerate(rows):
        if len(row) != stride:
            raise errors.InvalidArgumentError(
                f"Name: {label}, Key: {key}, Index: {t}.  Number of values != expected.  "
                f"values size: {len(row)} but output shape: {shape_text(shape)}"
            )
    flat = parsing.array_of([v for row in rows for v in row], dtype)
    return make_tensor(flat.reshape([len(rows), *shape]), dtype=dtype)


def _context_dense(spec: FixedLenFeature, key: str, found, label: str):
    dtype = check_dtype(spec)
    shape = spec_shape(spec, key)
    if (found is None or found[0] is None) and spec.default_value is not None:
        return parsing.dense_value(spec, key, None, parsing.Where(label, 0, False))
    kind, values = found if found is not None else (None, [])
    expected = kind_name(dtype)
    if kind is not None and kind != expected:
        raise errors.InvalidArgumentError(
            f"Name: {label}, Context feature: {key}.  Data types don't match. Expected type: "
            f"{expected}"
        )
    if len(values) != shape.num_elements():
        raise errors.InvalidArgumentError(
            f"Inconsistent max number of elements for feature {key}: expected "
            f"{shape.num_elements()}, but found {len(values)}"
        )
    return parsing.array_of(values, dtype).reshape(shape.as_list())


def _check_kinds(features: dict, allowed: tuple) -> None:
    for key in sorted(features):
        spec = features[key]
        if not isinstance(spec, allowed):
            raise ValueError(f"Unsupported {type(spec).__name__} {spec} for key '{key}'")


def parse_single_sequence_example(
    serialized, context_features=None, sequence_features=None, example_name=None, name=None
) -> tuple[dict, dict]:
    """Parse one serialized ``tf.train.SequenceExample``.

    Args:
        serialized: a scalar string.
        context_features: ``{key: FixedLenFeature | VarLenFeature}`` for the context.
        sequence_features: ``{key: FixedLenSequenceFeature | VarLenFeature}`` for the lists.
        example_name: a name for error messages.

    Returns:
        ``(context, sequences)``: two dicts of tensors (``SparseTensor`` for VarLen), each
        with its sparse keys first, then its dense keys, each group sorted.

    Raises:
        InvalidArgumentError: a required feature or list is missing, or has the wrong type
            or size; ``serialized`` is not a ``SequenceExample``.
        ValueError: neither dict given; a spec of the wrong kind for its dict.
    """
    single = parsing.serialized_strings(serialized)
    if single.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    if not context_features and not sequence_features:
        raise ValueError(
            "Both context_features and sequence_features are None, but at least one should "
            "have values."
        )
    context_features = dict(context_features or {})
    sequence_features = dict(sequence_features or {})
    _check_kinds(context_features, (FixedLenFeature, VarLenFeature))
    _check_kinds(sequence_features, (FixedLenSequenceFeature, VarLenFeature))
    label = "<unknown>" if example_name is None else str(example_name)
    try:
        context_raw, lists = read_sequence_example(single.item())
    except errors.DataLossError:
        raise errors.InvalidArgumentError(
            f"Invalid protocol message input, example id: {label}"
        ) from None
    context: dict = {}
    if context_features:
        sparse, dense = parsing.split_specs(context_features, "context_features")
        where = parsing.Where(label, 0, False)
        for key in sparse:
            spec = context_features[key]
            values = parsing.sparse_values(spec, key, context_raw.get(key), where)
            context[key] = parsing.sparse_tensor([values], check_dtype(spec), batched=False)
        for key in dense:
            spec = context_features[key]
            array = _context_dense(spec, key, context_raw.get(key), label)
            context[key] = make_tensor(array, dtype=check_dtype(spec))
    sequences: dict = {}
    if sequence_features:
        sparse, dense = parsing.split_specs(sequence_features, "sequence_features")
        for key in sparse + dense:
            sequences[key] = _sequence(sequence_features[key], key, lists.get(key), label)
    return context, sequences
