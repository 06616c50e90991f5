"""``tf.train.Example`` and its parts, in protobuf's wire format (tensorflow/core/example).

The messages of example.proto and feature.proto, with their field numbers::

    BytesList    { repeated bytes value = 1; }
    FloatList    { repeated float value = 1 [packed = true]; }
    Int64List    { repeated int64 value = 1 [packed = true]; }
    Feature      { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
                                Int64List int64_list = 3; } }
    Features     { map<string, Feature> feature = 1; }
    FeatureList  { repeated Feature feature = 1; }
    FeatureLists { map<string, FeatureList> feature_list = 1; }
    Example      { Features features = 1; }
    SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }

>>> import simdist as tf
>>> example = tf.train.Example(features=tf.train.Features(feature={
...     "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))}))
>>> example.SerializeToString()
b'\\n\\x10\\n\\x0e\\n\\x05label\\x12\\x05\\x1a\\x03\\n\\x01\\x07'
>>> tf.train.Example.FromString(example.SerializeToString()) == example
True
"""

from __future__ import annotations

from simdist.data.protobuf_message import Field, Message

__all__ = [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
]


class BytesList(Message):
    """``tf.train.BytesList``: ``value``, a list of byte strings."""

    __slots__ = ()
    FIELDS = (Field("value", 1, "bytes"),)


class FloatList(Message):
    """``tf.train.FloatList``: ``value``, a list of float32 numbers."""

    __slots__ = ()
    FIELDS = (Field("value", 1, "float"),)


class Int64List(Message):
    """``tf.train.Int64List``: ``value``, a list of int64 numbers."""

    __slots__ = ()
    FIELDS = (Field("value", 1, "int64"),)


class Feature(Message):
    """``tf.train.Feature``: one of ``bytes_list``, ``float_list``, ``int64_list``
    (``WhichOneof("kind")``)."""

    __slots__ = ()
    FIELDS = (
        Field("bytes_list", 1, "message", BytesList, oneof="kind"),
        Field("float_list", 2, "message", FloatList, oneof="kind"),
        Field("int64_list", 3, "message", Int64List, oneof="kind"),
    )


class Features(Message):
    """``tf.train.Features``: ``feature``, a map from names to ``Feature`` s."""

    __slots__ = ()
    FIELDS = (Field("feature", 1, "map", Feature),)


class FeatureList(Message):
    """``tf.train.FeatureList``: ``feature``, a list of ``Feature`` s (one per step)."""

    __slots__ = ()
    FIELDS = (Field("feature", 1, "messages", Feature),)


class FeatureLists(Message):
    """``tf.train.FeatureLists``: ``feature_list``, a map from names to ``FeatureList`` s."""

    __slots__ = ()
    FIELDS = (Field("feature_list", 1, "map", FeatureList),)


class Example(Message):
    """``tf.train.Example``: ``features``."""

    __slots__ = ()
    FIELDS = (Field("features", 1, "message", Features),)


class SequenceExample(Message):
    """``tf.train.SequenceExample``: ``context`` (``Features``) and ``feature_lists``."""

    __slots__ = ()
    FIELDS = (
        Field("context", 1, "message", Features),
        Field("feature_lists", 2, "message", FeatureLists),
    )
