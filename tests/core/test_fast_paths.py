"""The per-op fast paths give exactly what the general paths give (bit for bit)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist.core.ops import fused_ops
from simdist.core.ops._helpers import as_tensors, int_list

_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3.5, -2.25]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 12),
    st.sampled_from([np.float16, np.float32, np.float64, np.int32]),
    st.integers(0, 2**31 - 1),
)
def test_dense_kernel_grad_of_one_row_is_matmul_bit_for_bit(inner, units, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.int32:
        av, gm = rng.integers(-9, 9, (1, inner)), rng.integers(-9, 9, (1, units))
    else:
        av, gm = rng.choice(_SPECIAL, (1, inner)), rng.choice(_SPECIAL, (1, units))
    av, gm = av.astype(dtype), gm.astype(dtype)
    with np.errstate(all="ignore"):
        want = np.matmul(av.T, gm)
        got = fused_ops._kernel_grad(av, gm)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()  # -0.0 and NaN payloads included


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 2048),
    st.integers(1, 160),
    st.sampled_from([np.float32, np.float64]),
    st.integers(0, 2**31 - 1),
)
def test_dense_kernel_grad_of_one_row_at_layer_sizes_is_matmul_bit_for_bit(
    inner, units, dtype, seed
):
    # The BLAS path (inner dimension padded to 2) at the sizes of real Dense layers, where
    # BLAS blocks the product; a few special values among ordinary ones of any magnitude.
    rng = np.random.default_rng(seed)
    av = rng.standard_normal((1, inner)) * 10.0 ** rng.integers(-30, 30)
    gm = rng.standard_normal((1, units)) * 10.0 ** rng.integers(-30, 30)
    for arr in (av, gm):
        picks = rng.integers(0, arr.shape[1], 4)
        arr[0, picks] = rng.choice(_SPECIAL, 4)
    av, gm = av.astype(dtype), gm.astype(dtype)
    with np.errstate(all="ignore"):
        want = np.matmul(av.T, gm)
        got = fused_ops._kernel_grad(av, gm)
    assert got.tobytes() == want.tobytes()


def test_as_tensors_fast_path_reads_variables_and_checks_dtypes():
    v = tf.Variable([1.0, 2.0])
    x = tf.constant([3.0, 4.0])
    with tf.GradientTape() as tape:
        a, b = as_tensors("Op", x, v)
        y = a * b
    assert a is x and b.numpy().tolist() == [1.0, 2.0]
    assert tape.gradient(y, v).numpy().tolist() == [3.0, 4.0]
    try:
        as_tensors("Op", x, tf.constant([1, 2]))
    except tf.errors.InvalidArgumentError as exc:
        assert "Op" in str(exc)
    else:
        raise AssertionError("different dtypes must raise")


def test_int_list_fast_path_matches_general_path():
    assert int_list([2, -1], "shape") == [2, -1]
    assert int_list((3,), "shape") == [3]
    assert int_list([np.int64(2), 5], "shape") == [2, 5]
    assert int_list([True, 2], "shape") == [1, 2]


def test_gradient_through_a_two_output_op_with_one_unused_output():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        a, b = tf.unstack(x)
        y = tf.reduce_sum(a * 2.0)
    assert tape.gradient(y, x).numpy().tolist() == [[2.0, 2.0], [0.0, 0.0]]
