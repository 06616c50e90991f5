"""sort, argsort, top_k: stable orders against NumPy, gradients of values, TF's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from tests.gradcheck import check_gradients

# small integers: many ties, so the tie order is exercised
ARRAYS = hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                    elements=st.integers(-3, 3))


def stable_descending(a, axis):
    """Indices sorting ``a`` largest first, ties in index order (a stable sort of -a)."""
    return np.argsort(-a.astype(np.int64), axis=axis, kind="stable")


@settings(max_examples=80)
@given(a=ARRAYS, data=st.data())
def test_sort_and_argsort_match_stable_numpy(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    up = np.argsort(a, axis=axis, kind="stable")
    down = stable_descending(a, axis)
    np.testing.assert_array_equal(tf.argsort(a, axis=axis).numpy(), up)
    np.testing.assert_array_equal(tf.argsort(a, axis=axis, direction="DESCENDING").numpy(), down)
    np.testing.assert_array_equal(tf.sort(a, axis=axis).numpy(), np.sort(a, axis=axis))
    np.testing.assert_array_equal(tf.sort(a, axis=axis, direction="DESCENDING").numpy(),
                                  np.take_along_axis(a, down, axis=axis))
    assert tf.argsort(a).dtype == tf.int32 and tf.sort(a).dtype == tf.int32


@settings(max_examples=80)
@given(a=ARRAYS, data=st.data())
def test_top_k_is_the_first_k_of_a_stable_descending_sort(a, data):
    k = data.draw(st.integers(0, a.shape[-1]))
    result = tf.math.top_k(a, k=k)
    order = stable_descending(a, -1)[..., :k]
    np.testing.assert_array_equal(result.indices.numpy(), order)
    np.testing.assert_array_equal(result.values.numpy(), np.take_along_axis(a, order, axis=-1))
    assert type(result).__name__ == "TopKV2" and result.values.shape == a.shape[:-1] + (k,)


def test_gradients_scatter_back_to_where_values_came_from():
    x = np.random.default_rng(0).permutation(12).reshape(3, 4) * 0.5  # distinct values
    check_gradients(lambda v: tf.sort(v, axis=0), x)
    check_gradients(lambda v: tf.sort(v, direction="DESCENDING"), x)
    check_gradients(lambda v: tf.math.top_k(v, k=2).values, x)
    check_gradients(lambda v: tf.nn.top_k(v, k=4).values, x)


def test_top_k_index_type_and_ties_as_tf():
    r = tf.math.top_k([1, 3, 3, 2], k=2)
    assert r.values.numpy().tolist() == [3, 3] and r.indices.numpy().tolist() == [1, 2]
    assert tf.math.top_k([1.0, 2.0], 1, index_type=tf.int64).indices.dtype == tf.int64


@pytest.mark.parametrize(
    ("call", "error", "phrase"),
    [
        (lambda: tf.sort([[1, 2]], axis=2), tf.errors.InvalidArgumentError, "axis"),
        (lambda: tf.sort([1, 2], direction="UP"), ValueError, "ASCENDING, DESCENDING"),
        (lambda: tf.sort(["b", "a"]), tf.errors.InvalidArgumentError, "not in the list"),
        (lambda: tf.math.top_k([[1.0, 2.0]], k=3), tf.errors.InvalidArgumentError,
         "at least k columns. Had 2, needed 3"),
        (lambda: tf.math.top_k([1.0], k=-1), tf.errors.InvalidArgumentError, "Need k >= 0"),
        (lambda: tf.math.top_k(1.0, k=1), tf.errors.InvalidArgumentError, ">= 1-D"),
    ],
)
def test_bad_arguments(call, error, phrase):
    with pytest.raises(error, match=phrase):
        call()
