"""eye, linspace and meshgrid against NumPy; their gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients


@settings(max_examples=60)
@given(
    rows=st.integers(0, 4), cols=st.integers(0, 4), batch=st.lists(st.integers(0, 2), max_size=2)
)
def test_eye_matches_numpy(rows, cols, batch):
    got = tf.eye(rows, cols, batch_shape=batch, dtype=tf.int32).numpy()
    np.testing.assert_array_equal(got, np.broadcast_to(np.eye(rows, cols), batch + [rows, cols]))


@settings(max_examples=60)
@given(start=st.floats(-10, 10), stop=st.floats(-10, 10), num=st.integers(0, 9))
def test_linspace_matches_numpy(start, stop, num):
    got = tf.linspace(tf.constant(start, tf.float64), stop, num).numpy()
    np.testing.assert_allclose(got, np.linspace(start, stop, num), rtol=1e-12, atol=1e-12)
    if num > 1:
        assert got[0] == start and got[-1] == stop


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy_with_gradients(indexing):
    a, b, c = np.arange(2.0), np.arange(3.0), np.arange(4.0)
    for got, want in zip(
        tf.meshgrid(a, b, c, indexing=indexing),
        np.meshgrid(a, b, c, indexing=indexing),
        strict=True,
    ):
        np.testing.assert_array_equal(got.numpy(), want)

    def combined(x, y, z):
        gx, gy, gz = tf.meshgrid(x, y, z, indexing=indexing)
        return gx + 2 * gy * gz

    check_gradients(combined, a + 1, b + 1, c + 1)


def test_linspace_gradients():
    rng = np.random.default_rng(0)
    check_gradients(lambda a, b: tf.linspace(a, b, 4, axis=1), rng.random(2), rng.random(2))
    check_gradients(lambda a, b: tf.linspace(a, b, 3), rng.random(2), rng.random(1))
