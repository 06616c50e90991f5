"""The feature specs of ``tf.io.parse_example``: ``FixedLenFeature``, ``VarLenFeature``,
``FixedLenSequenceFeature`` (named tuples, as TF's).

Each names the dtype of a feature, one of ``tf.float32`` (a ``FloatList``), ``tf.int64``
(an ``Int64List``) and ``tf.string`` (a ``BytesList``):

* ``FixedLenFeature(shape, dtype, default_value=None)``: exactly ``prod(shape)`` values,
  given as a dense tensor of ``shape``; a missing feature takes ``default_value`` (reshaped
  to ``shape``), or is an error when there is none;
* ``VarLenFeature(dtype)``: any number of values, given as a ``SparseTensor``;
* ``FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)``: a
  multiple of ``prod(shape)`` values, given as ``[rows] + shape`` (batches padded with
  ``default_value``); in an ``Example`` it needs ``allow_missing=True``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from simdist import errors
from simdist.core import dtypes
from simdist.core.shape import TensorShape

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "VarLenFeature",
    "check_dtype",
    "kind_name",
    "shape_text",
    "spec_shape",
]

_KINDS = {"float32": "float", "int64": "int64", "string": "string"}
_TF_NAMES = {"float32": "float", "float64": "double"}  # TF's DataTypeString where it differs


class FixedLenFeature(NamedTuple):
    """A feature of a fixed number of values (``tf.io.FixedLenFeature``)."""

    shape: Any
    dtype: Any
    default_value: Any = None


class VarLenFeature(NamedTuple):
    """A feature of any number of values, parsed to a ``SparseTensor``
    (``tf.io.VarLenFeature``)."""

    dtype: Any


class FixedLenSequenceFeature(NamedTuple):
    """A feature of rows of a fixed shape (``tf.io.FixedLenSequenceFeature``)."""

    shape: Any
    dtype: Any
    allow_missing: bool = False
    default_value: Any = None


def check_dtype(spec: Any, attr: str = "Tdense") -> dtypes.DType:
    """The spec's dtype, which must be float32, int64 or string.

    Raises:
        InvalidArgumentError: another dtype (TF's message, naming the op attribute ``attr``
            that would hold it: ``Tdense`` or ``sparse_types``).
    """
    dtype = dtypes.as_dtype(spec.dtype)
    if dtype.name not in _KINDS:
        raise errors.InvalidArgumentError(
            f"Value for attr '{attr}' of {_TF_NAMES.get(dtype.name, dtype.name)} is not in the "
            "list of allowed values: float, int64, string"
        )
    return dtype


def kind_name(dtype: dtypes.DType) -> str:
    """TF's name of a feature's data type in its messages: float, int64, string."""
    return _KINDS[dtype.name]


def shape_text(dims: list) -> str:
    """A shape as TF's messages print it: ``[]``, ``[3]``, ``[?,2]``."""
    return "[" + ",".join(str(d) for d in dims) + "]"


def spec_shape(spec: Any, key: str) -> TensorShape:
    """The shape of a FixedLen(Sequence)Feature, which must be fully defined.

    Raises:
        ValueError: a dimension is unknown (TF's messages).
    """
    shape = TensorShape(spec.shape)
    if shape.rank and shape.as_list()[0] is None and not isinstance(spec, FixedLenSequenceFeature):
        raise ValueError(
            f"First dimension of shape for feature {key} unknown. Consider using "
            f"FixedLenSequenceFeature. Received feature={spec}."
        )
    if not shape.is_fully_defined():
        raise ValueError(
            f"All dimensions of shape for feature {key} need to be known but received "
            f"{list(spec.shape)}."
        )
    return shape
