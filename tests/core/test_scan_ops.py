"""cumsum/cumprod against NumPy (every exclusive/reverse combination) and their gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from tests.gradcheck import check_gradients


def reference(x, axis, exclusive, reverse, ufunc):
    x = np.flip(x, axis) if reverse else x
    out = ufunc.accumulate(x, axis=axis)
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full_like(out[:1], ufunc.identity), out[:-1]])
        out = np.moveaxis(out, 0, axis)
    return np.flip(out, axis) if reverse else out


@settings(max_examples=60)
@given(
    x=hnp.arrays(
        np.int64,
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
        elements=st.integers(-5, 5),
    ),
    data=st.data(),
    exclusive=st.booleans(),
    reverse=st.booleans(),
)
def test_scans_match_numpy(x, data, exclusive, reverse):
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    for fn, ufunc in [(tf.math.cumsum, np.add), (tf.math.cumprod, np.multiply)]:
        got = fn(x, axis=axis, exclusive=exclusive, reverse=reverse).numpy()
        np.testing.assert_array_equal(got, reference(x, axis % x.ndim, exclusive, reverse, ufunc))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradients(exclusive, reverse):
    x = np.random.default_rng(0).uniform(0.5, 2.0, (3, 4))
    check_gradients(lambda t: tf.cumsum(t, 1, exclusive, reverse), x)
    check_gradients(lambda t: tf.math.cumprod(t, 0, exclusive, reverse), x)


def test_scan_refuses_a_scalar_and_bool():
    with pytest.raises(tf.errors.InvalidArgumentError, match="range"):
        tf.cumsum(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="bool"):
        tf.cumsum([True])
