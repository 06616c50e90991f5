"""map_fn and vectorized_map against a loop over NumPy rows; structures; gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from tests.gradcheck import check_gradients

rows = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    elements=st.floats(-3, 3),
)


@settings(max_examples=50)
@given(x=rows)
def test_map_fn_is_a_loop_over_rows(x):
    want = np.stack([np.tanh(r) * 2 + r.sum() for r in x])
    for fn in (tf.map_fn, tf.vectorized_map):
        got = fn(lambda r: tf.nn.tanh(r) * 2 + tf.reduce_sum(r), x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nested_structures_and_signatures():
    out = tf.map_fn(
        lambda d: {"s": d["a"] + d["b"], "n": tf.cast(d["a"], tf.int32)},
        {"a": tf.constant([1.0, 2.0]), "b": tf.constant([3.0, 4.0])},
        fn_output_signature={"s": tf.float32, "n": tf.int32},
    )
    assert out["s"].numpy().tolist() == [4.0, 6.0] and out["n"].dtype == tf.int32
    with pytest.raises(ValueError, match="same nested structure"):
        tf.map_fn(lambda t: t[0], (tf.constant([1.0]), tf.constant([2.0])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="TensorArray dtype"):
        tf.map_fn(lambda t: tf.cast(t, tf.float32), tf.constant([1, 2]))


def test_gradients_flow_to_elems_and_variables():
    x = np.random.default_rng(0).standard_normal((3, 2))
    check_gradients(lambda t: tf.map_fn(lambda r: r * tf.reduce_sum(r * r), t), x)
    check_gradients(lambda t: tf.vectorized_map(lambda r: tf.exp(r), t), x)
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.map_fn(lambda e: e * v, tf.constant([1.0, 2.0, 3.0])))
    assert float(tape.gradient(y, v)) == 6.0
