"""tf.train.Example and its parts without TensorFlow: construction, wire bytes, parsing back,
equality, text format (tests/data/test_tfrecord_vs_tf.py holds them against protobuf's)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist.data.protobuf_message import DecodeError
from simdist.data.repeated import map_order

T = tf.train


def test_map_entries_are_written_sorted_by_key():
    features = T.Features()
    features.feature["b"].int64_list.value.append(1)
    features.feature["a"]
    assert list(features.feature) == ["b", "a"]  # insertion order
    assert features.SerializeToString() == (
        b"\n\x05\n\x01a\x12\x00" + b"\n\n\n\x01b\x12\x05\x1a\x03\n\x01\x01"
    )


def test_map_order_is_protobufs_deterministic_order():
    keys = ["zeta", "alpha", "", "é", "k1", "k10", "k0", "k11"]
    assert map_order(keys) == ["alpha", "k0", "k10", "k11", "k1", "zeta", "é", ""]


def test_keyword_construction_and_bytes():
    feature = T.Feature(int64_list=T.Int64List(value=[1, 2]))
    assert feature.SerializeToString() == b"\x1a\x04\n\x02\x01\x02"  # packed
    assert T.Int64List(value=[-1]).SerializeToString() == b"\n\n" + b"\xff" * 9 + b"\x01"
    assert T.FloatList(value=[1.5]).SerializeToString() == b"\n\x04\x00\x00\xc0?"
    assert T.BytesList(value=[b"a", b""]).SerializeToString() == b"\n\x01a\n\x00"
    example = T.Example(features=T.Features(feature={"a": feature}))
    assert example.SerializeToString() == b"\n\r\n\x0b\n\x01a\x12\x06" + feature.SerializeToString()
    assert T.Example.FromString(example.SerializeToString()) == example


def test_dict_construction_equals_message_construction():
    by_dict = T.Example(features={"feature": {"a": {"int64_list": {"value": [3]}}}})
    by_messages = T.Example(
        features=T.Features(feature={"a": T.Feature(int64_list=T.Int64List(value=[3]))})
    )
    assert by_dict == by_messages
    assert by_dict.SerializeToString() == by_messages.SerializeToString()


def test_presence_oneof_and_defaults():
    assert T.Example().SerializeToString() == b""
    assert T.Example(features=T.Features()).SerializeToString() == b"\n\x00"
    assert T.Example() != T.Example(features=T.Features())
    example = T.Example()
    _ = example.features  # reading makes nothing set
    assert not example.HasField("features") and example.SerializeToString() == b""
    example.features.feature["k"]  # a map entry does
    assert example.HasField("features")
    feature = T.Feature()
    assert feature.WhichOneof("kind") is None
    feature.int64_list.value.append(1)
    assert feature.WhichOneof("kind") == "int64_list"
    feature.float_list.value.append(2.0)  # the oneof moves
    assert feature.WhichOneof("kind") == "float_list" and not feature.HasField("int64_list")
    assert T.Feature(bytes_list=T.BytesList()).SerializeToString() == b"\n\x00"


def test_values_are_checked_as_protobuf_checks_them():
    with pytest.raises(TypeError, match="expected bytes, str found"):
        T.BytesList(value=["s"])
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        T.Int64List(value=[1.5])
    with pytest.raises(TypeError, match="got a boolean"):
        T.Int64List(value=[True])
    with pytest.raises(ValueError, match="Value out of range"):
        T.Int64List(value=[2**63])
    with pytest.raises(TypeError, match="must be real number, not str"):
        T.FloatList(value=["a"])
    with pytest.raises(TypeError, match="No positional arguments allowed"):
        T.Example(T.Features())
    with pytest.raises(ValueError, match='has no "foo" field'):
        T.Example(foo=1)
    assert list(T.FloatList(value=[0.1]).value) == [float(np.float32(0.1))]
    assert list(T.Int64List(value=np.arange(3)).value) == [0, 1, 2]
    with pytest.raises(AttributeError):
        T.Example().features = T.Features()
    with pytest.raises(AttributeError):
        T.Int64List().value = [1]
    with pytest.raises(ValueError):
        T.Features().feature["x"] = T.Feature()


def test_sequence_example_round_trip():
    seq = T.SequenceExample(
        context=T.Features(feature={"c": T.Feature(int64_list=T.Int64List(value=[1]))}),
        feature_lists=T.FeatureLists(feature_list={
            "s": T.FeatureList(feature=[T.Feature(int64_list=T.Int64List(value=[1])),
                                        T.Feature()]),
        }),
    )  # fmt: skip
    data = seq.SerializeToString()
    back = T.SequenceExample.FromString(data)
    assert back == seq and back.SerializeToString() == data
    assert len(back.feature_lists.feature_list["s"].feature) == 2
    parsed = T.SequenceExample()
    assert parsed.ParseFromString(data) == len(data)


def test_unpacked_numbers_unknown_fields_and_bad_bytes():
    assert list(T.Int64List.FromString(b"\x08\x01\x08\x02").value) == [1, 2]
    assert T.Int64List.FromString(b"\x10\x05").SerializeToString() == b"\x10\x05"  # kept
    with pytest.raises(DecodeError):
        T.Example.FromString(b"\x0a\x05abc")


def test_text_format():
    example = T.Example(features=T.Features(feature={
        "b": T.Feature(bytes_list=T.BytesList(value=[b'q"\n\x00\xc3'])),
        "a": T.Feature(float_list=T.FloatList(value=[0.1, 1.0, math.inf])),
    }))  # fmt: skip
    assert str(example) == (
        "features {\n"
        "  feature {\n"
        '    key: "a"\n'
        "    value {\n"
        "      float_list {\n"
        "        value: 0.1\n"
        "        value: 1\n"
        "        value: inf\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "  feature {\n"
        '    key: "b"\n'
        "    value {\n"
        "      bytes_list {\n"
        '        value: "q\\"\\n\\000\\303"\n'
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    assert repr(example) == str(example)


_names = st.text(st.characters(codec="utf-8"), max_size=6)
_feature = st.one_of(
    st.builds(lambda v: T.Feature(bytes_list=T.BytesList(value=v)),
              st.lists(st.binary(max_size=8))),
    st.builds(lambda v: T.Feature(int64_list=T.Int64List(value=v)),
              st.lists(st.integers(-(2**63), 2**63 - 1))),
    st.builds(lambda v: T.Feature(float_list=T.FloatList(value=v)),
              st.lists(st.floats(width=32, allow_nan=False))),
    st.just(T.Feature()),
)  # fmt: skip
examples = st.builds(
    lambda d: T.Example(features=T.Features(feature=d)), st.dictionaries(_names, _feature)
)


@given(examples)
def test_random_examples_round_trip(example):
    data = example.SerializeToString()
    back = T.Example.FromString(data)
    assert back == example
    assert back.SerializeToString() == data
    assert sorted(back.features.feature) == sorted(example.features.feature)
    assert list(back.features.feature) == map_order(example.features.feature)  # as written
