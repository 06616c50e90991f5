"""map / filter / flat_map / interleave: calling conventions, results, specs, TF's order."""

import collections

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import errors
from simdist.data import Dataset


def values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


def test_map_unpacks_tuples_and_passes_dicts_whole():
    pairs = Dataset.from_tensor_slices(([1, 2], [10, 20]))
    assert values(pairs.map(lambda a, b: a + b)) == [11, 22]
    dicts = Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]})
    assert values(dicts.map(lambda d: d["a"] * d["b"])) == [3, 8]
    Point = collections.namedtuple("Point", "x y")
    named = Dataset.from_tensor_slices(Point([1, 2], [5, 6]))
    assert values(named.map(lambda p: p.y)) == [5, 6]


def test_map_results_become_tensors():
    ds = Dataset.range(3).map(lambda x: [x, 1.5, np.float64(2.0)])  # top-level list -> tuple
    spec = ds.element_spec
    assert isinstance(spec, tuple)
    assert [s.dtype for s in spec] == [tf.int64, tf.float32, tf.float64]
    first = next(iter(ds))
    assert isinstance(first, tuple) and all(isinstance(v, tf.Tensor) for v in first)


def test_map_spec_has_none_for_value_dependent_dims():
    ds = Dataset.range(1, 4).map(lambda x: np.arange(int(x)))
    assert ds.element_spec == tf.TensorSpec([None], tf.int64)
    batched = Dataset.range(10).batch(4).map(lambda x: x * 2)
    assert batched.element_spec == tf.TensorSpec([None], tf.int64)


def test_map_runs_once_per_element_in_order():
    seen = []
    ds = Dataset.range(4).map(
        lambda x: seen.append(int(x)) or x, num_parallel_calls=tf.data.AUTOTUNE
    )
    assert values(ds) == [0, 1, 2, 3]
    assert seen == [0, 1, 2, 3]


def test_nested_structures_through_map_batch_unbatch():
    ds = Dataset.from_tensor_slices({"img": np.ones((6, 2), np.float32), "y": np.arange(6)})
    ds = ds.map(lambda d: (d["img"] * 2.0, {"label": d["y"]})).batch(4)
    assert ds.element_spec == (
        tf.TensorSpec([None, 2], tf.float32),
        {"label": tf.TensorSpec([None], tf.int64)},
    )
    img, extra = next(iter(ds))
    assert img.shape == (4, 2) and extra["label"].numpy().tolist() == [0, 1, 2, 3]
    assert values(ds.unbatch().map(lambda img, extra: extra["label"])) == list(range(6))


@given(st.lists(st.integers(-20, 20), max_size=50), st.integers(-5, 5))
def test_filter_matches_model(xs, threshold):
    ds = Dataset.from_tensor_slices(np.array(xs, dtype=np.int64)).filter(lambda x: x > threshold)
    assert values(ds) == [x for x in xs if x > threshold]
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY


def test_filter_needs_a_scalar_bool():
    with pytest.raises(ValueError, match="scalar boolean"):
        list(Dataset.range(3).filter(lambda x: x))
    assert values(Dataset.range(3).filter(lambda x: True)) == [0, 1, 2]


def interleave_model(inputs, make, cycle, block):
    """TF's interleave order, written out plainly."""
    slots, out, pending = [None] * cycle, [], list(inputs)
    i = 0
    while pending or any(s is not None for s in slots):
        if slots[i] is None and pending:
            slots[i] = list(make(pending.pop(0)))
        if slots[i] is not None:
            take, slots[i] = slots[i][:block], slots[i][block:]
            out.extend(take)
            if len(take) < block:  # ran out during this visit: the slot frees up
                slots[i] = None
        i = (i + 1) % cycle
    return out


def test_interleave_follows_tfs_documented_example():
    ds = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4
    )
    assert values(ds) == [
        1,
        1,
        1,
        1,
        2,
        2,
        2,
        2,
        1,
        1,
        2,
        2,
        3,
        3,
        3,
        3,
        4,
        4,
        4,
        4,
        3,
        3,
        4,
        4,
        5,
        5,
        5,
        5,
        5,
        5,
    ]


@given(st.lists(st.integers(0, 5), max_size=8), st.integers(1, 4), st.integers(1, 3))
def test_interleave_matches_model(sizes, cycle, block):
    def make(n):
        return [n * 10 + k for k in range(n)]

    ds = Dataset.from_tensor_slices(np.array(sizes, dtype=np.int64)).interleave(
        lambda n: Dataset.range(int(n)).map(lambda k: n * 10 + k),
        cycle_length=cycle,
        block_length=block,
    )
    assert values(ds) == interleave_model(sizes, make, cycle, block)


def test_flat_map_concatenates_in_order():
    ds = Dataset.range(4).flat_map(lambda x: Dataset.range(int(x)))
    assert values(ds) == [0, 0, 1, 0, 1, 2]
    assert ds.element_spec == tf.TensorSpec([], tf.int64)
    with pytest.raises(TypeError, match="must return a tf.data.Dataset"):
        list(Dataset.range(2).flat_map(lambda x: x))


def test_invalid_arguments():
    with pytest.raises(TypeError):
        Dataset.range(2).map(3)
    with pytest.raises(errors.InvalidArgumentError):
        Dataset.range(2).map(lambda x: x, num_parallel_calls=0)
    with pytest.raises(errors.InvalidArgumentError):
        Dataset.range(2).interleave(lambda x: Dataset.range(1), cycle_length=0)


def _rejects_everything(x):
    raise KeyError("not this element")


def test_a_function_failing_on_stand_ins_and_no_data_names_its_error():
    with pytest.raises(ValueError, match=r"stand-in inputs \(KeyError: 'not this element'\)") as e:
        _ = tf.data.Dataset.range(0).map(_rejects_everything).element_spec
    assert isinstance(e.value.__cause__, KeyError)


def test_a_function_failing_on_real_data_raises_its_own_error():
    with pytest.raises(KeyError, match="not this element"):
        _ = tf.data.Dataset.range(3).map(_rejects_everything).element_spec
