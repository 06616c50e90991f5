"""tf.linalg's matrix ops against NumPy; gradients by finite differences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients

rng = np.random.default_rng(0)


@settings(max_examples=40)
@given(n=st.integers(1, 4), batch=st.integers(1, 3), seed=st.integers(0, 99))
def test_inv_and_cholesky_match_numpy(n, batch, seed):
    a = np.random.default_rng(seed).standard_normal((batch, n, n))
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    np.testing.assert_allclose(tf.linalg.inv(spd).numpy(), np.linalg.inv(spd), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.cholesky(spd).numpy(), np.linalg.cholesky(spd), rtol=1e-10)


@settings(max_examples=60)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), data=st.data())
def test_diag_part_band_part_match_numpy(rows, cols, data):
    m = np.arange(rows * cols).reshape(rows, cols)
    k = data.draw(st.integers(-rows + 1, cols - 1))
    np.testing.assert_array_equal(tf.linalg.diag_part(m, k=k).numpy(), np.diagonal(m, k))
    lo, up = data.draw(st.integers(-1, rows)), data.draw(st.integers(-1, cols))
    offset = np.subtract.outer(np.arange(rows), np.arange(cols))
    keep = ((lo < 0) | (offset <= lo)) & ((up < 0) | (-offset <= up))
    np.testing.assert_array_equal(tf.linalg.band_part(m, lo, up).numpy(), np.where(keep, m, 0))
    d = np.arange(1, 4)
    np.testing.assert_array_equal(tf.linalg.diag(d, k=k).numpy(), np.diag(d, k))


def test_gradients():
    a = rng.standard_normal((2, 3, 3))
    check_gradients(tf.linalg.inv, a + 3 * np.eye(3))
    check_gradients(lambda t: tf.linalg.inv(t, adjoint=True), a + 3 * np.eye(3))
    spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)
    check_gradients(
        lambda t: tf.linalg.cholesky((t + tf.transpose(t, [0, 2, 1])) / 2),
        spd,
        rtol=1e-4,
        atol=1e-5,
    )
    check_gradients(lambda t: tf.linalg.diag(t, k=-1), rng.standard_normal((2, 3)))
    check_gradients(lambda t: tf.linalg.diag_part(t, k=1), rng.standard_normal((2, 3, 4)))
    check_gradients(lambda t: tf.linalg.band_part(t, 1, 0), rng.standard_normal((3, 4)))
    check_gradients(lambda t: tf.math.l2_normalize(t, axis=-1), rng.standard_normal((3, 4)))
    check_gradients(tf.linalg.matvec, rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4)))


def test_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
        tf.linalg.inv([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="square"):
        tf.linalg.cholesky([[1.0, 2.0]])
    assert np.isnan(tf.linalg.cholesky([[1.0, 2.0], [2.0, 1.0]]).numpy()[1, 1])
