"""parse_single_example, parse_example, parse_single_sequence_example without TensorFlow:
shapes, dtypes, sparse results, padding and errors (messages as TF 2.21's; the TF tier,
tests/data/test_tfrecord_vs_tf.py, compares the two)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import errors

T = tf.train
io = tf.io


def example(**features) -> bytes:
    def feature(value):
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return T.Feature(bytes_list=T.BytesList(value=value))
        if isinstance(value, list) and value and isinstance(value[0], float):
            return T.Feature(float_list=T.FloatList(value=value))
        if value is None:
            return T.Feature()
        return T.Feature(int64_list=T.Int64List(value=value))

    feats = {k: feature(v) for k, v in features.items()}
    return T.Example(features=T.Features(feature=feats)).SerializeToString()


ONE = example(f=[1.0, 2.0], i=[3], s=[b"a", b"b", b"c"], e=None)
TWO = example(f=[1.0, 2.0, 3.0, 4.0], i=[3, 4, 5])


def test_single_example_dense_sparse_and_sequence():
    out = io.parse_single_example(ONE, {
        "f": io.FixedLenFeature([2], tf.float32),
        "i": io.FixedLenFeature([], tf.int64),
        "s": io.VarLenFeature(tf.string),
        "q": io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "d": io.FixedLenFeature([2], tf.int64, default_value=[7, 8]),
    })  # fmt: skip
    assert list(out) == ["s", "d", "f", "i", "q"]  # sparse keys first, each group sorted
    assert out["f"].dtype == tf.float32 and out["f"].numpy().tolist() == [1.0, 2.0]
    assert out["i"].dtype == tf.int64 and out["i"].shape == []
    assert out["d"].numpy().tolist() == [7, 8]
    sparse = out["s"]
    assert isinstance(sparse, tf.SparseTensor)
    assert sparse.indices.numpy().tolist() == [[0], [1], [2]]
    assert sparse.values.numpy().tolist() == [b"a", b"b", b"c"]
    assert sparse.dense_shape.numpy().tolist() == [3]
    assert out["q"].shape == [0, 2]


def test_batch_pads_sequences_and_stacks_sparse():
    out = io.parse_example([ONE, TWO], {
        "i": io.VarLenFeature(tf.int64),
        "f": io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=-1.0),
    })  # fmt: skip
    assert out["i"].indices.numpy().tolist() == [[0, 0], [1, 0], [1, 1], [1, 2]]
    assert out["i"].dense_shape.numpy().tolist() == [2, 3]
    assert out["f"].numpy().tolist() == [[[1, 2], [-1, -1]], [[1, 2], [3, 4]]]
    dense = tf.sparse.to_dense(out["i"]).numpy().tolist()
    assert dense == [[3, 0, 0], [3, 4, 5]]


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"zz": io.FixedLenFeature([], tf.float32)},
         "Feature: zz (data type: float) is required but could not be found."),
        ({"e": io.FixedLenFeature([], tf.int64)},
         "Feature: e (data type: int64) is required but could not be found."),
        ({"i": io.FixedLenFeature([], tf.float32)},
         "Key: i.  Data types don't match. Data type: int64 but expected type: float"),
        ({"f": io.FixedLenFeature([3], tf.float32)},
         "Key: f.  Can't parse serialized Example: Some float_list slice was not parsed."),
        ({"s": io.FixedLenFeature([], tf.string)},
         "Key: s.  Can't parse serialized Example: Parsing bytes_list failed."),
        ({"s": io.VarLenFeature(tf.int64)},
         "Key: s.  Data types don't match. Expected type: int64, Actual type: string"),
    ],
)  # fmt: skip
def test_errors_name_the_key(spec, message):
    """A scalar goes through TF's single-example parser, whose words these are."""
    with pytest.raises(errors.InvalidArgumentError) as info:
        io.parse_single_example(ONE, spec)
    assert str(info.value) == message


def test_batch_errors_name_the_example():
    with pytest.raises(errors.InvalidArgumentError) as info:
        io.parse_example([ONE, TWO], {"i": io.FixedLenFeature([], tf.int64)})
    assert str(info.value) == (
        "Name: <unknown>, Key: i, Index: 1.  Number of int64 values != expected.  Values size: "
        "3 but output shape: []"
    )
    with pytest.raises(errors.InvalidArgumentError, match="^Name: b, Feature: s"):
        io.parse_example([ONE, TWO], {"s": io.FixedLenFeature([3], tf.string)},
                         example_names=["a", "b"])  # fmt: skip


def test_unsupported_dtype_and_spec():
    with pytest.raises(errors.InvalidArgumentError, match="attr 'Tdense' of int32"):
        io.parse_single_example(ONE, {"f": io.FixedLenFeature([], tf.int32)})
    with pytest.raises(ValueError, match="features cannot be empty"):
        io.parse_single_example(ONE, {})
    with pytest.raises(ValueError, match="First dimension of shape for feature f unknown"):
        io.parse_single_example(ONE, {"f": io.FixedLenFeature([None], tf.float32)})
    with pytest.raises(ValueError):
        io.parse_single_example(ONE, {"f": io.FixedLenSequenceFeature([], tf.float32)})
    with pytest.raises(ValueError):
        io.parse_single_example([ONE], {"i": io.FixedLenFeature([], tf.int64)})


def test_inside_dataset_map():
    ds = tf.data.Dataset.from_tensor_slices([ONE, ONE]).map(
        lambda s: io.parse_single_example(s, {"f": io.FixedLenFeature([2], tf.float32)})
    )
    assert [b["f"].numpy().tolist() for b in ds] == [[1.0, 2.0], [1.0, 2.0]]
    assert ds.element_spec == {"f": tf.TensorSpec([2], tf.float32)}


def test_sequence_example():
    seq = T.SequenceExample(
        context=T.Features(feature={"c": T.Feature(int64_list=T.Int64List(value=[1]))}),
        feature_lists=T.FeatureLists(feature_list={
            "s": T.FeatureList(feature=[T.Feature(int64_list=T.Int64List(value=[1, 2])),
                                        T.Feature(int64_list=T.Int64List(value=[3, 4]))]),
            "v": T.FeatureList(feature=[T.Feature(bytes_list=T.BytesList(value=[b"x"])),
                                        T.Feature(bytes_list=T.BytesList(value=[b"y", b"z"]))]),
        })).SerializeToString()  # fmt: skip
    context, lists = io.parse_single_sequence_example(
        seq,
        context_features={"c": io.FixedLenFeature([], tf.int64)},
        sequence_features={"s": io.FixedLenSequenceFeature([2], tf.int64),
                           "v": io.VarLenFeature(tf.string)},
    )  # fmt: skip
    assert context["c"].numpy() == 1
    assert lists["s"].numpy().tolist() == [[1, 2], [3, 4]]
    assert lists["v"].indices.numpy().tolist() == [[0, 0], [1, 0], [1, 1]]
    assert lists["v"].dense_shape.numpy().tolist() == [2, 2]
    with pytest.raises(errors.InvalidArgumentError, match="Feature list 'q' is required"):
        io.parse_single_sequence_example(seq, sequence_features={
            "q": io.FixedLenSequenceFeature([2], tf.int64)})  # fmt: skip


@given(st.lists(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5), min_size=1, max_size=6))
def test_varlen_batch_to_dense_is_the_padded_values(rows):
    batch = [example(x=row) if row else example() for row in rows]
    out = io.parse_example(batch, {"x": io.VarLenFeature(tf.int64)})["x"]
    longest = max(len(r) for r in rows)
    expected = np.array([r + [0] * (longest - len(r)) for r in rows], dtype=np.int64)
    np.testing.assert_array_equal(tf.sparse.to_dense(out).numpy().reshape(expected.shape), expected)
