"""The worker wire format: exact round trips of what workers exchange, and nothing else."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdist.backends import wire

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.binary(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), inner, max_size=3),
    ),
    max_leaves=12,
)


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return a == b


@given(values)
def test_plain_values_round_trip_with_their_types(value):
    assert _same(wire.decode(wire.encode(value)), value)


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int8", "uint64", "bool", "complex64", ">i4"]
)
def test_arrays_round_trip_bit_for_bit(dtype):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal((3, 4)) * 100).astype(dtype)
    if array.dtype.kind == "f":
        array.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    back = wire.decode(wire.encode(("data", 3, array)))
    assert back[:2] == ("data", 3)
    assert back[2].dtype == array.dtype and back[2].shape == array.shape
    assert back[2].tobytes() == array.tobytes()
    assert back[2].flags.writeable


def test_numpy_scalars_special_floats_and_empty_arrays():
    value = (np.int64(7), np.float32(-0.0), float("nan"), float("-inf"), np.zeros((0, 3)))
    back = wire.decode(wire.encode(value))
    assert type(back[0]) is np.int64 and back[0] == 7
    assert type(back[1]) is np.float32 and np.signbit(back[1])
    assert np.isnan(back[2]) and back[3] == float("-inf")
    assert back[4].shape == (0, 3)


@pytest.mark.parametrize(
    "value", [object(), {1, 2}, np.array(["a"], dtype=object), np.array([("a", 1)], dtype="U1,i4")]
)
def test_what_the_wire_cannot_carry_is_refused_by_the_sender(value):
    with pytest.raises(TypeError, match="cannot be sent between workers"):
        wire.encode(("call", 0, "x", value))


def _message(header: bytes, body: bytes = b"") -> bytes:
    return wire.MAGIC + len(header).to_bytes(4, "big") + header + body


class _Boom:
    def __reduce__(self):
        return (print, ("this must never run",))


@pytest.mark.parametrize(
    "data",
    [
        pickle.dumps(_Boom()),  # a pickle is not a message: refused, never unpickled
        b"SDW1",
        _message(b"{bad}"),
        wire.encode(np.arange(4))[:-1],  # truncated
        _message(b'{"tree":["x",1],"sizes":[]}'),  # an unknown tag
        _message(b'{"tree":["a","|O",[1],0],"sizes":[8]}', bytes(8)),  # object dtype
        _message(b'{"tree":["a","<f8",[2],0],"sizes":[8]}', bytes(8)),  # 2 doubles in 8 bytes
        _message(b'{"tree":["a","<f8",[1],3],"sizes":[8]}', bytes(8)),  # a missing blob
    ],
)
def test_malformed_messages_are_refused_with_a_value_error(data, capsys):
    with pytest.raises(ValueError, match="message"):
        wire.decode(data)
    assert "must never run" not in capsys.readouterr().out
