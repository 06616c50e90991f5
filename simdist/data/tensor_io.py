"""``tf.io.serialize_tensor``, ``tf.io.parse_tensor``, ``tf.io.decode_raw``: tensors as bytes.

``serialize_tensor`` writes a ``TensorProto`` (tensorflow/core/framework/tensor.proto) as
TensorFlow does: ``dtype = 1`` (the ``DataType`` number), ``tensor_shape = 2`` (always set;
one ``dim = 2`` per dimension, each ``size = 1`` left out when 0), then numbers as
``tensor_content = 4`` (their little-endian bytes, left out when empty) or strings as
``string_val = 8``, one field each. ``parse_tensor`` also reads the typed value fields other
writers use (``float_val = 5``, ``double_val = 6``, ``int_val = 7``, ``int64_val = 10``,
``bool_val = 11``, ``half_val = 13``; a last value repeated to fill the shape, as TF does).

>>> import simdist as tf
>>> data = tf.io.serialize_tensor(tf.constant([1.0, 2.0]))
>>> data.numpy()
b'\\x08\\x01\\x12\\x04\\x12\\x02\\x08\\x02"\\x08\\x00\\x00\\x80?\\x00\\x00\\x00@'
>>> tf.io.parse_tensor(data, tf.float32).numpy().tolist()
[1.0, 2.0]
"""

from __future__ import annotations

import base64

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.tensor import Tensor, make_tensor
from simdist.data import protobuf_wire as wire

__all__ = ["decode_raw", "parse_tensor", "parse_tensor_proto", "serialize_tensor",
           "tensor_proto"]  # fmt: skip

DATA_TYPES = {  # simdist dtype name -> tensorflow.DataType number
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "string": 7,
    "int64": 9,
    "bool": 10,
    "float16": 19,
}
_BY_NUMBER = {number: name for name, number in DATA_TYPES.items()}
_TF_NAMES = {"float32": "float", "float64": "double"}  # TF's DataTypeString where it differs


def tf_name(dtype: dtypes.DType) -> str:
    return _TF_NAMES.get(dtype.name, dtype.name)


def tensor_proto(array: np.ndarray, dtype: dtypes.DType | None = None) -> bytes:
    """The serialized ``TensorProto`` of an array (strings: an object array of bytes).

    Raises:
        TypeError: a dtype with no ``DataType`` here.
    """
    array = np.asarray(array)
    if dtype is None and array.dtype.kind in "USO":
        dtype = dtypes.string
    elif dtype is None:
        try:
            dtype = dtypes.as_dtype(array.dtype)
        except (TypeError, ValueError):
            raise TypeError(f"Cannot serialize a tensor of dtype {array.dtype}.") from None
    number = DATA_TYPES.get(dtype.name)
    if number is None:
        raise TypeError(f"Cannot serialize a tensor of dtype {dtype.name}.")
    shape = b"".join(wire.length_field(2, wire.varint_field(1, int(d))) for d in array.shape)
    head = wire.varint_field(1, number) + wire.length_field(2, shape)
    if dtype == dtypes.string:
        items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in array.ravel()]
        return head + b"".join(wire.length_field(8, item) for item in items)
    content = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return head + (wire.length_field(4, content) if content else b"")


def _typed_values(number: int, wire_type: int, value, kind: str) -> list:
    """The values of one typed field (packed or not) as Python numbers."""
    if kind in ("float", "double"):
        width, code = (4, "<f4") if kind == "float" else (8, "<f8")
        payload = bytes(value)
        if len(payload) % width:
            raise errors.DataLossError(f"a packed {kind} field of odd length (field {number})")
        return np.frombuffer(payload, dtype=code).tolist()
    if wire_type == wire.VARINT:
        return [wire.as_int64(value)]
    return wire.unpack_varints(value)


_TYPED_FIELDS = {5: "float", 6: "double", 7: "int", 10: "int", 11: "int", 13: "int"}


def parse_tensor_proto(data: bytes) -> tuple[np.ndarray, str]:
    """The array of a serialized ``TensorProto`` and its dtype name.

    Raises:
        InvalidArgumentError: ``data`` is not a ``TensorProto`` simdist can read.
    """
    number, dims, content, strings, typed = 0, [], None, [], []
    try:
        for field, wire_type, value in wire.read_fields(data):
            if field == 1 and wire_type == wire.VARINT:
                number = value
            elif field == 2 and wire_type == wire.LENGTH:
                for dim_field, dim_type, dim in wire.read_fields(value):
                    if dim_field == 2 and dim_type == wire.LENGTH:
                        size = 0
                        for size_field, size_type, item in wire.read_fields(dim):
                            if size_field == 1 and size_type == wire.VARINT:
                                size = wire.as_int64(item)
                        dims.append(size)
            elif field == 4 and wire_type == wire.LENGTH:
                content = bytes(value)
            elif field == 8 and wire_type == wire.LENGTH:
                strings.append(bytes(value))
            elif field in _TYPED_FIELDS:
                typed += _typed_values(field, wire_type, value, _TYPED_FIELDS[field])
    except errors.DataLossError:
        raise errors.InvalidArgumentError(
            "Could not parse `serialized` as TensorProto, base64: "
            f"{base64.b64encode(bytes(data)).decode('ascii')}"
        ) from None
    name = _BY_NUMBER.get(number)
    if name is None:
        raise errors.InvalidArgumentError(
            f"Could not parse `serialized` as TensorProto: DataType {number} is not one "
            "simdist has."
        )
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    dtype = dtypes.as_dtype(name)
    if name == "string":
        values = strings
    elif content is not None:
        array = np.frombuffer(content, dtype=np.dtype(dtype.as_numpy_dtype).newbyteorder("<"))
        values = array.astype(dtype.as_numpy_dtype)
    elif name == "float16":
        values = np.array(typed, dtype=np.uint16).view(np.float16)
    else:
        values = np.array(typed, dtype=dtype.as_numpy_dtype)
    if len(values) != count:
        if len(values) == 0 or len(values) > count or content is not None:
            raise errors.InvalidArgumentError(
                f"Could not parse `serialized` as TensorProto: {len(values)} values for "
                f"shape {dims}."
            )
        values = list(values) + [values[-1]] * (count - len(values))
    out = np.empty(count, dtype=object) if name == "string" else None
    if out is not None:
        out[:] = values
    else:
        out = np.asarray(values, dtype=dtype.as_numpy_dtype)
    return out.reshape(dims), name


def _scalar_bytes(value, what: str) -> bytes:
    raw = value.numpy() if isinstance(value, Tensor) else value
    array = np.asarray(raw, dtype=object)
    if array.ndim != 0:
        raise errors.InvalidArgumentError(
            f"Expected `{what}` to be a scalar, got shape: "
            f"[{','.join(str(d) for d in array.shape)}]"
        )
    item = array.item()
    return item.encode("utf-8") if isinstance(item, str) else item


def serialize_tensor(tensor, name=None) -> Tensor:
    """A scalar string tensor: ``tensor`` as a serialized ``TensorProto``."""
    value = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    return make_tensor(
        np.array(tensor_proto(value.numpy(), value.dtype), dtype=object), dtype=dtypes.string
    )


def parse_tensor(serialized, out_type, name=None) -> Tensor:
    """The tensor a serialized ``TensorProto`` holds; it must be of ``out_type``.

    Raises:
        InvalidArgumentError: ``serialized`` is not a scalar ``TensorProto``, or holds
            another dtype.
    """
    data = _scalar_bytes(serialized, "serialized")
    expected = dtypes.as_dtype(out_type)
    array, found = parse_tensor_proto(data)
    if found != expected.name:
        raise errors.InvalidArgumentError(
            f"Type mismatch between parsed tensor ({tf_name(dtypes.as_dtype(found))}) and "
            f"dtype ({tf_name(expected)})"
        )
    return make_tensor(array, dtype=expected)


def decode_raw(input_bytes, out_type, little_endian: bool = True, fixed_length=None,
               name=None) -> Tensor:  # fmt: skip
    """Each string's bytes read as a vector of ``out_type`` (``tf.io.decode_raw``).

    The result has the input's shape plus one dimension, the count of values per string.

    Raises:
        InvalidArgumentError: the strings differ in length (without ``fixed_length``), or a
            length is not a multiple of the dtype's size.
    """
    dtype = dtypes.as_dtype(out_type)
    if dtype == dtypes.string:
        raise errors.InvalidArgumentError(
            "Value for attr 'out_type' of string is not in the list of allowed values: half, "
            "float, double, int32, uint16, uint8, int16, int8, int64, complex64, complex128, "
            "bool, bfloat16"
        )
    raw = input_bytes.numpy() if isinstance(input_bytes, Tensor) else input_bytes
    array = np.asarray(raw, dtype=object)
    flat = [v.encode("utf-8") if isinstance(v, str) else v for v in array.ravel().tolist()]
    width = np.dtype(dtype.as_numpy_dtype).itemsize
    if fixed_length is not None:
        length = int(fixed_length)
        if length % width:
            raise errors.InvalidArgumentError(
                f"fixed_length ({length}) must be a multiple of the size of out_type ({width})"
            )
        flat = [v[:length].ljust(length, b"\x00") for v in flat]
    sizes = {len(v) for v in flat}
    if len(sizes) > 1:
        first = len(flat[0])
        bad = next(i for i, v in enumerate(flat) if len(v) != first)
        raise errors.InvalidArgumentError(
            f"DecodeRaw requires input strings to all be the same size, but element {bad} has "
            f"size {first} != {len(flat[bad])}"
        )
    size = sizes.pop() if sizes else 0
    if size % width:
        raise errors.InvalidArgumentError(
            f"Input to DecodeRaw has length {size} that is not a multiple of {width}, the size "
            f"of {tf_name(dtype)}"
        )
    code = np.dtype(dtype.as_numpy_dtype).newbyteorder("<" if little_endian else ">")
    values = np.frombuffer(b"".join(flat), dtype=code).astype(dtype.as_numpy_dtype)
    return make_tensor(values.reshape([*array.shape, size // width]), dtype=dtype)
