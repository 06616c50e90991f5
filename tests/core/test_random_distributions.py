"""poisson, gamma (values, moments, reparameterised gradients) and stateless seed derivation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist.core.random_distributions import _lower_regularized_gamma, _standard_gamma_grad


@settings(max_examples=60)
@given(x=st.floats(1e-3, 40))
def test_incomplete_gamma_matches_closed_forms(x):
    got = _lower_regularized_gamma(np.array([0.5, 1.0, 2.0]), np.array([x, x, x]))
    want = [math.erf(math.sqrt(x)), 1 - math.exp(-x), 1 - math.exp(-x) * (1 + x)]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_incomplete_gamma_gives_nan_for_nan_and_zero_at_zero():
    a, x = np.array([np.nan, 2.0, 2.0, 2.0]), np.array([1.0, np.nan, 0.0, -1.0])
    got = _lower_regularized_gamma(a, x)
    np.testing.assert_array_equal(got, [np.nan, np.nan, 0.0, 0.0])


@settings(max_examples=30)
@given(alpha=st.floats(0.2, 20), quantile=st.floats(0.05, 0.95))
def test_gamma_gradient_keeps_the_quantile(alpha, quantile):
    # the sample at this quantile, by bisection on P
    lo, hi = 0.0, alpha + 20 * math.sqrt(alpha) + 20
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _lower_regularized_gamma(alpha, mid) < quantile else (lo, mid)
    x = (lo + hi) / 2
    dx = float(_standard_gamma_grad(np.array([alpha]), np.array([x]))[0])
    h = 1e-4
    moved = float(_lower_regularized_gamma(alpha + h, x + h * dx))
    assert moved == pytest.approx(quantile, abs=1e-6)


def test_moments_and_mean_gradients():
    tf.random.set_seed(3)
    lam = tf.constant([0.5, 4.0], tf.float64)
    counts = tf.random.poisson([40000], lam, dtype=tf.float64)
    np.testing.assert_allclose(tf.reduce_mean(counts, 0).numpy(), lam.numpy(), rtol=0.03)
    a, b = tf.constant([0.5, 3.0], tf.float64), tf.constant([2.0, 0.5], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        mean = tf.reduce_mean(tf.random.gamma([40000], a, b, dtype=tf.float64), axis=0)
    np.testing.assert_allclose(mean.numpy(), (a / b).numpy(), rtol=0.03)
    da, db = tape.gradient(mean, [a, b])
    np.testing.assert_allclose(da.numpy(), 1 / b.numpy(), rtol=0.03)
    np.testing.assert_allclose(db.numpy(), -(a / b**2).numpy(), rtol=0.03)


def test_stateless_seeds_are_pure_and_distinct():
    split = tf.random.experimental.stateless_split([1, 2], num=4).numpy()
    assert split.shape == (4, 2) and len({tuple(s) for s in split}) == 4
    np.testing.assert_array_equal(split, tf.random.experimental.stateless_split([1, 2], 4))
    fold = tf.random.experimental.stateless_fold_in([1, 2], 7).numpy()
    assert fold.shape == (2,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        tf.random.experimental.stateless_split([1])
    first = tf.random.stateless_gamma([5], [3, 4], 2.0)
    np.testing.assert_array_equal(first, tf.random.stateless_gamma([5], [3, 4], 2.0))


def test_poisson_has_no_gradient():
    rate = tf.constant([2.0])
    with tf.GradientTape() as tape:
        tape.watch(rate)
        counts = tf.random.poisson([3], rate)
    with pytest.raises(LookupError):
        tape.gradient(counts, rate)


def test_stateless_categorical_is_pure_and_follows_the_logits():
    logits = [[0.0, 0.0], [10.0, -10.0]]
    draws = tf.random.stateless_categorical(logits, 2000, seed=[5, 6]).numpy()
    np.testing.assert_array_equal(draws, tf.random.stateless_categorical(logits, 2000, [5, 6]))
    assert (draws[1] == 0).all() and 0.45 < draws[0].mean() < 0.55
