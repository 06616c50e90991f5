"""Shuffle: a permutation, seeded, reshuffled per epoch (or not), TF's bounded-buffer window."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import errors
from simdist.core import random as core_random
from simdist.data import Dataset


def order(ds):
    return [int(v) for v in ds.as_numpy_iterator()]


@given(st.integers(0, 50), st.integers(1, 60), st.integers(0, 2**31))
def test_shuffle_is_a_permutation(n, buffer, seed):
    assert sorted(order(Dataset.range(n).shuffle(buffer, seed=seed))) == list(range(n))


@given(st.integers(2, 40), st.integers(1, 8), st.integers(0, 1000))
def test_buffer_bounds_how_far_an_element_moves_forward(n, buffer, seed):
    # An element can only be emitted once it has entered the buffer: at output position p
    # the buffer has seen at most the first p + buffer elements.
    out = order(Dataset.range(n).shuffle(buffer, seed=seed))
    assert all(v < p + buffer for p, v in enumerate(out))


def test_buffer_of_one_keeps_order():
    assert order(Dataset.range(10).shuffle(1, seed=3)) == list(range(10))


def test_same_seed_same_order_across_datasets():
    a = Dataset.range(30).shuffle(30, seed=7)
    b = Dataset.range(30).shuffle(30, seed=7)
    c = Dataset.range(30).shuffle(30, seed=8)
    assert order(a) == order(b)
    assert order(a) != order(c)


def test_reshuffle_each_iteration():
    ds = Dataset.range(30).shuffle(30, seed=1)
    first, second = order(ds), order(ds)
    assert first != second and sorted(first) == sorted(second)
    fixed = Dataset.range(30).shuffle(30, seed=1, reshuffle_each_iteration=False)
    assert order(fixed) == order(fixed)
    assert order(fixed) == first  # epoch 0 is the same order either way


def test_repeat_after_shuffle_reshuffles_each_round():
    rounds = order(Dataset.range(20).shuffle(20, seed=2).repeat(2))
    assert sorted(rounds[:20]) == sorted(rounds[20:]) == list(range(20))
    assert rounds[:20] != rounds[20:]
    same = order(Dataset.range(20).shuffle(20, seed=2, reshuffle_each_iteration=False).repeat(2))
    assert same[:20] == same[20:]


def test_copies_restart_the_epoch_count():
    ds = Dataset.range(25).shuffle(25, seed=4)
    first = order(ds)
    order(ds)
    assert order(ds._copy_graph()) == first


def test_unseeded_shuffle_is_deterministic_after_set_seed():
    try:
        core_random.set_seed(5)
        a = order(Dataset.range(30).shuffle(30))
        b = order(Dataset.range(30).shuffle(30))
        core_random.set_seed(5)
        assert order(Dataset.range(30).shuffle(30)) == a
        assert a != b  # the unseeded-op counter gives each dataset its own op seed
    finally:
        core_random.set_seed(None)


def test_invalid_buffer_size():
    with pytest.raises(errors.InvalidArgumentError, match="buffer_size"):
        Dataset.range(3).shuffle(0)


def test_tutorial_pipeline_images_labels_shuffle_batch():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 255, size=(50, 4, 4), dtype=np.uint8)
    labels = np.arange(50, dtype=np.uint8)
    images = images[..., None].astype(np.float32) / np.float32(255)
    ds = Dataset.from_tensor_slices((images, labels)).shuffle(50, seed=0).batch(16)
    assert ds.element_spec == (
        tf.TensorSpec([None, 4, 4, 1], tf.float32),
        tf.TensorSpec([None], tf.uint8),
    )
    seen = []
    for x, y in ds:
        assert x.shape[1:] == (4, 4, 1) and y.dtype == tf.uint8
        np.testing.assert_array_equal(x.numpy(), images[y.numpy()])  # pairs stay together
        seen.extend(y.numpy().tolist())
    assert sorted(seen) == list(range(50))
    assert [len(b[1]) for b in ds] == [16, 16, 16, 2]


@given(
    st.integers(0, 40),
    st.sampled_from([1, 3, 16, 100, -1]),
    st.integers(1, 9),
    st.booleans(),
    st.booleans(),
)
def test_batches_of_a_shuffled_slices_source_are_its_shuffled_rows_stacked(
    n, buffer, size, drop, reshuffle
):
    # Over a slices source, shuffle hands batch whole gathers of rows; a take(-1) between
    # them makes batch stack the shuffled elements one by one. Two epochs of each must match.
    images = np.arange(n * 6, dtype=np.float32).reshape(n, 2, 3)
    labels = np.arange(n) % 7

    def epochs(between):
        ds = Dataset.from_tensor_slices({"x": images, "y": labels})
        ds = between(ds.shuffle(buffer, seed=5, reshuffle_each_iteration=reshuffle))
        return list(ds.batch(size, drop_remainder=drop).repeat(2).as_numpy_iterator())

    gathered, stacked = epochs(lambda d: d), epochs(lambda d: d.take(-1))
    assert len(gathered) == len(stacked)
    for a, b in zip(gathered, stacked, strict=True):
        for key in ("x", "y"):
            assert a[key].dtype == b[key].dtype
            np.testing.assert_array_equal(a[key], b[key])
    assert sum(len(b["y"]) for b in gathered) == 2 * (n - n % size if drop else n)
