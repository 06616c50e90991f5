"""Sources: from_tensor_slices / from_tensors / range / from_generator, and element types."""

import collections

import numpy as np
import pytest

import simdist as tf
from simdist import errors
from simdist.data import Dataset


def test_slices_of_a_tuple_keep_numpy_dtypes():
    images = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    scaled = images.astype(np.float64) / 255.0
    ds = Dataset.from_tensor_slices((images, scaled, [1.5, 2.5], [1, 2]))
    specs = ds.element_spec
    assert [s.dtype for s in specs] == [tf.uint8, tf.float64, tf.float32, tf.int32]
    assert specs[0] == tf.TensorSpec([3, 3], tf.uint8)
    first = next(iter(ds))
    np.testing.assert_array_equal(first[0].numpy(), images[0])
    assert first[0].device.endswith("device:CPU:0")


def test_a_python_list_is_one_tensor_not_a_structure():
    ds = Dataset.from_tensor_slices([[1, 2], [3, 4], [5, 6]])
    assert ds.element_spec == tf.TensorSpec([2], tf.int32)
    assert [v.tolist() for v in ds.as_numpy_iterator()] == [[1, 2], [3, 4], [5, 6]]


def test_dicts_and_namedtuples_come_back_as_given():
    Point = collections.namedtuple("Point", ["x", "y"])
    ds = Dataset.from_tensor_slices({"b": [1, 2], "a": (Point([1.0, 2.0], [3, 4]),)})
    element = next(iter(ds))
    assert list(element) == ["b", "a"]
    assert isinstance(element["a"][0], Point)
    assert float(element["a"][0].x) == 1.0 and int(element["a"][0].y) == 3
    assert isinstance(ds.element_spec["a"][0], Point)


def test_first_dimensions_must_agree():
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        Dataset.from_tensor_slices(([1, 2], [1, 2, 3]))
    with pytest.raises(ValueError, match="rank >= 1"):
        Dataset.from_tensor_slices(1.0)


def test_from_tensors_is_one_element():
    ds = Dataset.from_tensors(([1.0], {"k": np.int64(3)}))
    assert int(ds.cardinality()) == 1
    ((x, d),) = list(ds)
    assert x.shape == (1,) and d["k"].dtype == tf.int64


def test_tensors_pass_through():
    t = tf.constant([[1.0, 2.0]])
    ds = Dataset.from_tensor_slices(t)
    assert ds.element_spec == tf.TensorSpec([2], tf.float32)
    assert next(iter(ds)).numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "args,expected",
    [
        ((5,), [0, 1, 2, 3, 4]),
        ((2, 5), [2, 3, 4]),
        ((1, 10, 3), [1, 4, 7]),
        ((5, 0, -2), [5, 3, 1]),
    ],
)
def test_range_is_pythons_range(args, expected):
    ds = Dataset.range(*args)
    assert list(ds.as_numpy_iterator()) == expected
    assert int(ds.cardinality()) == len(expected)
    assert ds.element_spec == tf.TensorSpec([], tf.int64)


def test_range_output_type_and_step_zero():
    assert Dataset.range(3, output_type=tf.int32).element_spec.dtype == tf.int32
    with pytest.raises(errors.InvalidArgumentError, match="step"):
        Dataset.range(0, 5, 0)


def test_strings_are_bytes():
    ds = Dataset.from_tensor_slices(["ab", "c"])
    assert ds.element_spec == tf.TensorSpec([], tf.string)
    assert list(ds.as_numpy_iterator()) == [b"ab", b"c"]


def test_from_generator_checks_the_signature():
    def gen():
        yield 1, [1.0, 2.0]
        yield 2, [3.0]

    sig = (tf.TensorSpec([], tf.int64), tf.TensorSpec([None], tf.float32))
    ds = Dataset.from_generator(gen, output_signature=sig)
    assert ds.element_spec == sig
    out = list(ds.as_numpy_iterator())
    assert out[1][0] == 2 and out[1][1].dtype == np.float32
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    bad = Dataset.from_generator(lambda: iter([[1, 2, 3]]), output_signature=tf.TensorSpec([2]))
    with pytest.raises(errors.InvalidArgumentError, match="shape"):
        list(bad)


def test_iterating_twice_restarts_and_get_next_raises_at_end():
    ds = Dataset.range(2)
    assert list(ds.as_numpy_iterator()) == list(ds.as_numpy_iterator()) == [0, 1]
    it = iter(ds)
    assert int(it.get_next()) == 0 and int(next(it)) == 1
    with pytest.raises(errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)
    opt = iter(ds).get_next_as_optional()
    assert bool(opt.has_value()) and int(opt.get_value()) == 0
    assert not bool(iter(Dataset.range(0)).get_next_as_optional().has_value())


def test_graph_walk_and_rebuild():
    src = Dataset.range(10)
    ds = src.batch(2).prefetch(1)
    assert ds._inputs()[0]._inputs() == [src]
    assert src._inputs() == []
    rebuilt = ds._with_inputs([ds._inputs()[0]._with_inputs([src.shard(2, 1)])])
    assert [v.tolist() for v in rebuilt.as_numpy_iterator()] == [[1, 3], [5, 7], [9]]
    assert [v.tolist() for v in ds.as_numpy_iterator()][0] == [0, 1]  # original untouched


def test_reduce_folds_elements():
    total = Dataset.range(5).reduce(np.int64(0), lambda state, x: state + x)
    assert int(total) == 10
    pairs = Dataset.from_tensor_slices(([1, 2], [3, 4]))
    assert int(pairs.reduce(0, lambda s, e: s + e[0] * e[1])) == 11


def test_elements_live_on_the_host_of_the_device_scope():
    with tf.device("/job:worker/task:1/device:GPU:0"):
        it = iter(Dataset.range(2))
    assert next(it).device == "/job:worker/replica:0/task:1/device:CPU:0"


def test_face_reexports():
    assert tf.data.Dataset is Dataset
    assert tf.data.experimental.AutoShardPolicy.DATA == 2
    assert int(tf.data.experimental.cardinality(Dataset.range(3))) == 3
    assert isinstance(iter(Dataset.range(1)), tf.data.Iterator)
    assert repr(Dataset.range(3)) == (
        "<_RangeDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    )
