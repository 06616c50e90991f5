"""gather_nd, scatter_nd, tensor_scatter_nd_*: values against NumPy loops, errors, gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients


@st.composite
def params_and_indices(draw):
    """A params array, and index rows of depth M into it (leading index dims of any shape)."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    depth = draw(st.integers(1, len(shape)))
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    rows = [
        [draw(st.integers(0, d - 1)) for d in shape[:depth]]
        for _ in range(int(np.prod(lead, dtype=int)))
    ]
    indices = np.asarray(rows, dtype=np.int32).reshape(lead + (depth,))
    params = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * 0.5 - 1
    return params, indices


def gather_nd_reference(params, indices):
    lead, depth = indices.shape[:-1], indices.shape[-1]
    out = np.empty(lead + params.shape[depth:], params.dtype)
    for pos in np.ndindex(*lead):
        out[pos] = params[tuple(indices[pos])]
    return out


def scatter_add_reference(base, indices, updates):
    out = base.copy()
    for pos in np.ndindex(*indices.shape[:-1]):
        out[tuple(indices[pos])] += updates[pos]
    return out


@settings(max_examples=60)
@given(case=params_and_indices())
def test_gather_nd_matches_a_loop_and_its_gradient_accumulates_repeats(case):
    params, indices = case
    np.testing.assert_array_equal(tf.gather_nd(params, indices).numpy(),
                                  gather_nd_reference(params, indices))
    check_gradients(lambda p: tf.gather_nd(p, indices), params)


@settings(max_examples=60)
@given(case=params_and_indices(), data=st.data())
def test_scatter_ops_match_loops_and_their_gradients(case, data):
    base, indices = case
    update_shape = indices.shape[:-1] + base.shape[indices.shape[-1]:]
    updates = np.asarray(
        data.draw(st.lists(st.integers(-5, 5), min_size=int(np.prod(update_shape, dtype=int)),
                           max_size=int(np.prod(update_shape, dtype=int)))),
        dtype=np.float64,
    ).reshape(update_shape)
    zeros = np.zeros_like(base)
    np.testing.assert_array_equal(tf.scatter_nd(indices, updates, base.shape).numpy(),
                                  scatter_add_reference(zeros, indices, updates))
    np.testing.assert_array_equal(tf.tensor_scatter_nd_add(base, indices, updates).numpy(),
                                  scatter_add_reference(base, indices, updates))
    np.testing.assert_array_equal(tf.tensor_scatter_nd_sub(base, indices, updates).numpy(),
                                  scatter_add_reference(base, indices, -updates))
    expected = base.copy()
    for pos in np.ndindex(*indices.shape[:-1]):  # in index order: the last write wins
        expected[tuple(indices[pos])] = updates[pos]
    np.testing.assert_array_equal(
        tf.tensor_scatter_nd_update(base, indices, updates).numpy(), expected
    )
    check_gradients(lambda u: tf.scatter_nd(indices, u, base.shape), updates)
    check_gradients(lambda t, u: tf.tensor_scatter_nd_add(t, indices, u), base, updates)
    check_gradients(lambda t, u: tf.tensor_scatter_nd_sub(t, indices, u), base, updates)


def test_tensor_scatter_nd_update_gradient_skips_overwritten_entries():
    # unique indices: the finite-difference check is well defined
    check_gradients(
        lambda t, u: tf.tensor_scatter_nd_update(t, [[0], [2]], u),
        np.arange(8.0).reshape(4, 2), np.ones((2, 2)),
    )
    base = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(base)
        out = tf.tensor_scatter_nd_update(base, [[1]], [9.0])
    np.testing.assert_array_equal(tape.gradient(out, base).numpy(), [1.0, 0.0, 1.0])


def test_gather_nd_batch_dims():
    params = np.arange(24.0).reshape(2, 3, 4)
    indices = np.array([[[1], [0]], [[2], [2]]])
    out = tf.gather_nd(params, indices, batch_dims=1).numpy()
    np.testing.assert_array_equal(out, np.stack([params[0][[1, 0]], params[1][[2, 2]]]))
    np.testing.assert_array_equal(tf.gather_nd([[1, 2], [3, 4]], [[1], [0]], batch_dims=1), [2, 3])
    check_gradients(lambda p: tf.gather_nd(p, indices, batch_dims=1), params)


def test_dtypes_and_shapes_follow_tf():
    assert tf.gather_nd(tf.constant([[1, 2]], tf.int64), [[0, 1]]).dtype == tf.int64
    assert tf.scatter_nd([[0]], tf.constant([1], tf.int8), [3]).dtype == tf.int8
    assert tf.gather_nd(tf.zeros([2, 3, 4]), tf.zeros([5, 1], tf.int64)).shape == [5, 3, 4]
    # a Python number update takes the tensor's dtype, as in TF
    assert tf.tensor_scatter_nd_update(tf.zeros([4]), [[1]], [1]).dtype == tf.float32


@pytest.mark.parametrize(
    ("call", "error", "phrase"),
    [
        (lambda: tf.gather_nd([[1.0, 2.0]], [[0, 5]]), tf.errors.InvalidArgumentError,
         r"indices\[0\] = \[0, 5\] does not index into param shape \[1, 2\]"),
        (lambda: tf.gather_nd([[1.0, 2.0]], [[0, -1]]), tf.errors.InvalidArgumentError,
         "does not index into param shape"),
        (lambda: tf.gather_nd([[1.0, 2.0]], [[0, 1, 0]]), tf.errors.InvalidArgumentError,
         "index innermost dimension length must be <= param"),
        (lambda: tf.gather_nd([[1.0, 2.0]], 1), tf.errors.InvalidArgumentError,
         "indices must be at least a vector"),
        (lambda: tf.gather_nd([[1.0, 2.0]], [[0.0, 1.0]]), tf.errors.InvalidArgumentError,
         "Tindices"),
        (lambda: tf.scatter_nd([[5]], [1.0], [4]), tf.errors.InvalidArgumentError,
         r"indices\[0\] = \[5\] does not index into shape \[4\]"),
        (lambda: tf.scatter_nd([[1], [2]], [1.0, 2.0, 3.0], [4]), tf.errors.InvalidArgumentError,
         "updates must have shape"),
        (lambda: tf.scatter_nd([[1]], [1.0], [-4]), tf.errors.InvalidArgumentError,
         "must be >= 0"),
        (lambda: tf.tensor_scatter_nd_update(tf.zeros([4]), [[5]], [1.0]),
         tf.errors.InvalidArgumentError, "does not index into shape"),
        (lambda: tf.tensor_scatter_nd_add(tf.zeros([4]), [[1]], tf.constant([1.0], tf.float64)),
         tf.errors.InvalidArgumentError, "double tensor"),
    ],
)
def test_bad_arguments_raise_tfs_errors(call, error, phrase):
    with pytest.raises(error, match=phrase):
        call()
