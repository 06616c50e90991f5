"""erf, erfc, lgamma, digamma, the float tests and polyval against Python's math; gradients."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients

floats = st.floats(-20, 20)


@settings(max_examples=60)
@given(x=floats)
def test_erf_and_lgamma_match_math(x):
    t = tf.constant(x, tf.float64)
    assert float(tf.math.erf(t)) == math.erf(x)
    assert float(tf.math.erfc(t)) == math.erfc(x)
    want = math.inf if x <= 0 and x == int(x) else math.lgamma(x)
    assert float(tf.math.lgamma(t)) == want


@settings(max_examples=60)
@given(x=st.floats(-20, 20).filter(lambda v: not (round(v) <= 0 and abs(v - round(v)) < 1e-3)))
def test_digamma_is_the_derivative_of_lgamma(x):
    h = 1e-6
    numeric = (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)
    got = float(tf.math.digamma(tf.constant(x, tf.float64)))
    assert got == pytest.approx(numeric, rel=1e-5, abs=1e-5)


def test_digamma_known_values_and_poles():
    euler = 0.5772156649015329
    got = tf.math.digamma(tf.constant([1.0, 0.5, 0.0, -2.0], tf.float64)).numpy()
    np.testing.assert_allclose(got[:2], [-euler, -euler - 2 * math.log(2)], rtol=1e-14)
    assert np.isnan(got[2:]).all()


def test_float_tests_and_refusals():
    x = tf.constant([1.0, np.nan, np.inf, -np.inf])
    assert tf.math.is_nan(x).numpy().tolist() == [False, True, False, False]
    assert tf.math.is_inf(x).numpy().tolist() == [False, False, True, True]
    assert tf.math.is_finite(x).numpy().tolist() == [True, False, False, False]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.is_nan(1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.erf(1)


@settings(max_examples=60)
@given(coeffs=st.lists(st.integers(-5, 5), max_size=5), x=st.integers(-3, 3))
def test_polyval_matches_numpy(coeffs, x):
    got = tf.math.polyval([float(c) for c in coeffs], tf.constant(float(x), tf.float64))
    assert float(got) == (np.polyval(coeffs, x) if coeffs else 0.0)


def test_gradients():
    x = np.random.default_rng(0).uniform(0.2, 3.0, 5)
    check_gradients(tf.math.erf, x)
    check_gradients(tf.math.erfc, x)
    check_gradients(tf.math.lgamma, x)
    check_gradients(tf.math.lgamma, -x - 0.05)
    check_gradients(tf.math.digamma, x, rtol=1e-5)
    check_gradients(tf.math.digamma, -x - 0.05, rtol=1e-5)
    check_gradients(lambda a, b, t: tf.math.polyval([a, b, 3.0], t), x, x, x)
