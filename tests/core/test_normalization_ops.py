"""gelu, batch_normalization and conv1d against their definitions; gradients."""

import math

import numpy as np
import pytest

import simdist as tf
from tests.gradcheck import check_gradients

rng = np.random.default_rng(0)


def test_gelu_matches_its_formulas():
    x = np.linspace(-4, 4, 17)
    exact = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x]
    np.testing.assert_allclose(tf.nn.gelu(x).numpy(), exact, rtol=1e-12, atol=1e-15)
    tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(tf.nn.gelu(x, approximate=True).numpy(), tanh, rtol=1e-12)
    check_gradients(tf.nn.gelu, x)
    check_gradients(lambda t: tf.nn.gelu(t, approximate=True), x)


def test_batch_normalization_matches_its_formula():
    x, m, v, o, s = (
        rng.standard_normal((3, 2)),
        rng.standard_normal(2),
        rng.random(2) + 0.5,
        rng.standard_normal(2),
        rng.standard_normal(2),
    )
    got = tf.nn.batch_normalization(x, m, v, o, s, 1e-3).numpy()
    np.testing.assert_allclose(got, s * (x - m) / np.sqrt(v + 1e-3) + o, rtol=1e-12)
    check_gradients(lambda *t: tf.nn.batch_normalization(*t, 1e-3), x, m, v, o, s)


def test_conv1d_is_a_sliding_dot_product():
    x, k = rng.standard_normal((2, 7, 3)), rng.standard_normal((3, 3, 2))
    got = tf.nn.conv1d(x, k, stride=2, padding="VALID").numpy()
    want = np.stack([np.einsum("bwc,wco->bo", x[:, i : i + 3], k) for i in range(0, 5, 2)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    ncw = tf.nn.conv1d(np.transpose(x, [0, 2, 1]), k, 2, "VALID", data_format="NCW").numpy()
    np.testing.assert_allclose(ncw, np.transpose(want, [0, 2, 1]), rtol=1e-12)
    check_gradients(lambda a, b: tf.nn.conv1d(a, b, 2, "SAME", dilations=1), x, k)


def test_timestamp_is_the_clock_and_refused_under_op_determinism():
    import time

    from simdist.testing import fresh_runtime

    with fresh_runtime():
        before = time.time()
        stamp = tf.timestamp()
        assert stamp.dtype == tf.float64 and before <= float(stamp) <= time.time()
        tf.config.experimental.enable_op_determinism()
        with pytest.raises(tf.errors.FailedPreconditionError, match="determinism"):
            tf.timestamp()
