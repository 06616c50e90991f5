"""Math ops: forward values vs NumPy, gradients vs finite differences, TF's dtype rules."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from simdist.core.ops import math_ops
from tests.gradcheck import check_gradients

GRAD_SETTINGS = settings(max_examples=15)


def floats(lo=-3.0, hi=3.0):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64)


def array(shape, lo=-3.0, hi=3.0, unique=False):
    return hnp.arrays(np.float64, shape, elements=floats(lo, hi), unique=unique)


small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
broadcast_pairs = hnp.mutually_broadcastable_shapes(
    num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3
)


@st.composite
def binary_arrays(draw, lo=-3.0, hi=3.0):
    shapes = draw(broadcast_pairs).input_shapes
    return draw(array(shapes[0], lo, hi)), draw(array(shapes[1], lo, hi))


# --- binary ops: forward and gradient --------------------------------------------------------
BINARY = {
    "add": (tf.add, np.add),
    "subtract": (tf.subtract, np.subtract),
    "multiply": (tf.multiply, np.multiply),
    "maximum": (tf.maximum, np.maximum),
    "minimum": (tf.minimum, np.minimum),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@GRAD_SETTINGS
@given(xy=binary_arrays())
def test_binary_gradients_with_broadcasting(name, xy):
    x, y = xy
    op, ref = BINARY[name]
    if name in ("maximum", "minimum"):
        assume(np.all(np.abs(np.subtract(x, y)) > 1e-3))  # away from ties
    np.testing.assert_allclose(op(x, y).numpy(), ref(x, y))
    check_gradients(op, x, y)


@GRAD_SETTINGS
@given(xy=binary_arrays())
def test_divide_gradient(xy):
    x, y = xy
    y = np.where(np.abs(y) < 0.5, 1.0 + np.abs(y), y)
    np.testing.assert_allclose(tf.divide(x, y).numpy(), x / y)
    check_gradients(tf.divide, x, y)


@GRAD_SETTINGS
@given(xy=binary_arrays(0.5, 2.0), sign=st.sampled_from([-1.0, 1.0]))
def test_pow_gradient(xy, sign):
    x, y = xy
    y = y * sign
    np.testing.assert_allclose(tf.pow(x, y).numpy(), x**y)
    check_gradients(tf.pow, x, y)


@GRAD_SETTINGS
@given(xy=binary_arrays())
def test_floormod_gradient_away_from_jumps(xy):
    x, y = xy
    y = np.where(np.abs(y) < 0.5, 1.5, y)
    ratio = x / y
    assume(np.all(np.abs(ratio - np.round(ratio)) > 1e-3))
    np.testing.assert_allclose(math_ops.floormod(x, y).numpy(), np.mod(x, y))
    check_gradients(math_ops.floormod, x, y)


def test_maximum_minimum_ties_give_the_whole_gradient_to_x():
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.constant([1.0, 5.0, 0.0])
    for op, expect_x in ((tf.maximum, [1.0, 0.0, 1.0]), (tf.minimum, [1.0, 1.0, 0.0])):
        with tf.GradientTape() as tape:
            tape.watch([x, y])
            out = op(x, y)
        gx, gy = tape.gradient(out, [x, y])
        np.testing.assert_array_equal(gx.numpy(), expect_x)
        np.testing.assert_array_equal(gy.numpy(), 1.0 - np.array(expect_x))


@GRAD_SETTINGS
@given(
    dims=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
    batch=st.sampled_from([(), (2,)]),
    transpose_a=st.booleans(),
    transpose_b=st.booleans(),
    data=st.data(),
)
def test_matmul_forward_and_gradient(dims, batch, transpose_a, transpose_b, data):
    n, k, m = dims
    a = data.draw(array(batch + ((k, n) if transpose_a else (n, k))))
    b = data.draw(array(batch + ((m, k) if transpose_b else (k, m))))

    def op(a, b):
        return tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)

    am = np.swapaxes(a, -1, -2) if transpose_a else a
    bm = np.swapaxes(b, -1, -2) if transpose_b else b
    np.testing.assert_allclose(op(a, b).numpy(), am @ bm)
    check_gradients(op, a, b)


def test_matmul_shape_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Matrix size-incompatible"):
        tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 2"):
        tf.matmul(tf.ones([3]), tf.ones([3, 1]))


def test_matmul_operator_on_variables():
    w = tf.Variable([[1.0], [2.0]])
    x = tf.constant([[3.0, 4.0]])
    np.testing.assert_array_equal((x @ w).numpy(), [[11.0]])
    np.testing.assert_array_equal((w @ x).numpy(), [[3.0, 4.0], [6.0, 8.0]])


# --- unary ops ---------------------------------------------------------------------------------
UNARY = {
    "exp": (tf.exp, np.exp, -2.0, 2.0),
    "log": (math_ops.log, np.log, 0.5, 3.0),
    "log1p": (math_ops.log1p, np.log1p, -0.5, 3.0),
    "sqrt": (tf.sqrt, np.sqrt, 0.5, 3.0),
    "rsqrt": (math_ops.rsqrt, lambda v: 1 / np.sqrt(v), 0.5, 3.0),
    "square": (tf.square, np.square, -3.0, 3.0),
    "reciprocal": (math_ops.reciprocal, np.reciprocal, 0.5, 3.0),
    "negative": (tf.negative, np.negative, -3.0, 3.0),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@GRAD_SETTINGS
@given(shape=small_shapes, data=st.data())
def test_unary_gradients(name, shape, data):
    op, ref, lo, hi = UNARY[name]
    x = data.draw(array(shape, lo, hi))
    np.testing.assert_allclose(op(x).numpy(), ref(x), rtol=1e-12)
    check_gradients(op, x)


@GRAD_SETTINGS
@given(shape=small_shapes, data=st.data())
def test_abs_and_sign_gradients_away_from_zero(shape, data):
    x = data.draw(array(shape))
    assume(np.all(np.abs(x) > 1e-3))
    check_gradients(tf.abs, x)
    check_gradients(tf.sign, x)
    np.testing.assert_array_equal(tf.abs(x).numpy(), np.abs(x))
    np.testing.assert_array_equal(tf.sign(x).numpy(), np.sign(x))


def test_rounding_ops_follow_tf():
    x = tf.constant([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.7])
    np.testing.assert_array_equal(tf.round(x).numpy(), [-2, -2, -0, 0, 2, 2, 2])  # half to even
    np.testing.assert_array_equal(tf.floor(x).numpy(), np.floor(x.numpy()))
    np.testing.assert_array_equal(math_ops.ceil(x).numpy(), np.ceil(x.numpy()))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.round(x) + tf.floor(x) + math_ops.ceil(x)
    assert tape.gradient(y, x) is None  # not differentiable, as in TF


def test_transcendental_ops_reject_integers():
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.exp(tf.constant(1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.sqrt(tf.constant([4]))
    assert tf.abs(tf.constant([-3])).numpy().tolist() == [3]
    assert tf.square(tf.constant([-3])).dtype == tf.int32


def test_log_of_invalid_values_gives_nan_and_inf_silently():
    out = math_ops.log(tf.constant([0.0, -1.0]))
    assert np.isneginf(out.numpy()[0]) and np.isnan(out.numpy()[1])


@GRAD_SETTINGS
@given(shape=small_shapes, data=st.data())
def test_clip_by_value_gradient(shape, data):
    x = data.draw(array(shape))
    assume(np.all(np.abs(np.abs(x) - 1.0) > 1e-3))

    def op(t):
        return tf.clip_by_value(t, -1.0, 1.0)

    np.testing.assert_array_equal(op(x).numpy(), np.clip(x, -1, 1))
    check_gradients(op, x)


def test_clip_by_value_gradient_to_bounds():
    x = tf.constant([-2.0, 0.0, 2.0])
    lo, hi = tf.constant(-1.0), tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch([x, lo, hi])
        y = tf.clip_by_value(x, lo, hi)
    gx, glo, ghi = tape.gradient(y, [x, lo, hi])
    assert gx.numpy().tolist() == [0.0, 1.0, 0.0]
    assert float(glo) == 1.0 and float(ghi) == 1.0


def test_add_n():
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = tf.add_n([a, b, a])
    assert y.numpy().tolist() == [5.0, 8.0]
    ga, gb = tape.gradient(y, [a, b])
    assert ga.numpy().tolist() == [2.0, 2.0] and gb.numpy().tolist() == [1.0, 1.0]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.add_n([a, tf.constant([1.0])])


# --- cast ----------------------------------------------------------------------------------
def test_cast_float_to_int_truncates_toward_zero():
    x = tf.constant([-1.7, -0.5, 0.5, 1.7])
    assert tf.cast(x, tf.int32).numpy().tolist() == [-1, 0, 0, 1]
    assert tf.cast(x, tf.bool).numpy().tolist() == [True, True, True, True]
    assert tf.cast(tf.constant([0, 2]), tf.bool).numpy().tolist() == [False, True]


def test_cast_gradient_only_between_floats():
    x = tf.constant([1.5, 2.5])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y64 = tf.cast(x, tf.float64) * 2.0
        yint = tf.cast(x, tf.int32)
    g = tape.gradient(y64, x)
    assert g.dtype == tf.float32 and g.numpy().tolist() == [2.0, 2.0]
    assert tape.gradient(yint, x) is None
    same = tf.constant([1.0])
    assert tf.cast(same, tf.float32) is same
    with pytest.raises(tf.errors.UnimplementedError):
        tf.cast(tf.constant([1]), tf.string)


# --- integer arithmetic -------------------------------------------------------------------------
@given(
    x=hnp.arrays(np.int32, 4, elements=st.integers(-50, 50)),
    y=hnp.arrays(np.int32, 4, elements=st.integers(-7, 7).filter(bool)),
)
def test_integer_division_family_matches_python(x, y):
    pairs = list(zip(x.tolist(), y.tolist(), strict=True))
    assert math_ops.floordiv(x, y).numpy().tolist() == [a // b for a, b in pairs]
    assert math_ops.floormod(x, y).numpy().tolist() == [a % b for a, b in pairs]
    quotient = tf.divide(tf.constant(x), tf.constant(y))
    assert quotient.dtype == tf.float64
    np.testing.assert_allclose(quotient.numpy(), x / y)


def test_truediv_dtypes_follow_tf():
    assert (tf.constant([1], tf.int8) / tf.constant([2], tf.int8)).dtype == tf.float32
    assert (tf.constant([1], tf.int16) / 2).dtype == tf.float32
    assert (tf.constant([1], tf.int64) / 2).dtype == tf.float64
    assert (tf.constant([1.0]) / 2).dtype == tf.float32


def test_integer_division_by_zero_raises():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        tf.constant([1]) // 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        tf.constant([1]) % 0


def test_float_division_by_zero_is_inf():
    assert np.isinf((tf.constant(1.0) / 0.0).numpy())


def test_integer_pow():
    assert (tf.constant([2, 3]) ** 2).numpy().tolist() == [4, 9]
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        tf.constant(2) ** -1


# --- dtype rules --------------------------------------------------------------------------
@pytest.mark.parametrize("op", [tf.add, tf.subtract, tf.multiply, tf.divide, tf.maximum])
def test_mixed_tensor_dtypes_raise(op):
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32 tensor"):
        op(tf.constant([1.0]), tf.constant([1]))


def test_mul_error_message_is_tfs():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.constant(1.0) * tf.constant(1)
    assert str(info.value).startswith(
        "cannot compute Mul as input #1(zero-based) was expected to be a float tensor but is "
        "a int32 tensor"
    )


@given(value=st.integers(-100, 100), dtype=st.sampled_from([tf.float32, tf.float64, tf.int64]))
def test_python_scalars_take_the_tensor_dtype(value, dtype):
    t = tf.constant([1], dtype=dtype)
    for out in (t + value, value + t, t * value, value - t):
        assert out.dtype == dtype


def test_python_float_with_int_tensor_raises_type_error():
    with pytest.raises(TypeError):
        tf.constant(1) + 1.5


def test_numpy_float64_stays_float64():
    t = tf.constant(np.array([1.0, 2.0]))
    assert t.dtype == tf.float64
    assert (t * 2).dtype == tf.float64
    assert (t + np.float64(1.5)).dtype == tf.float64


def test_bool_arithmetic_is_refused():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant(True) + tf.constant(False)


def test_incompatible_shapes_raise_tf_message():
    message = r"Incompatible shapes: \[2\] vs. \[3\]"
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf.constant([1.0, 2.0]) + tf.constant([1.0, 2.0, 3.0])


# --- comparisons, logical, equality -------------------------------------------------------------
@given(xy=binary_arrays())
def test_comparisons_match_numpy(xy):
    x, y = (tf.constant(v) for v in xy)
    for ours, ref in (
        (x < y, np.less), (x <= y, np.less_equal), (x > y, np.greater),
        (x >= y, np.greater_equal), (tf.equal(x, y), np.equal), (tf.not_equal(x, y), np.not_equal),
    ):  # fmt: skip
        assert ours.dtype == tf.bool
        np.testing.assert_array_equal(ours.numpy(), ref(*xy))


def test_equality_operator_semantics():
    t = tf.constant([1, 2])
    assert (t == None) is False  # noqa: E711 - the operator is under test
    assert (t != None) is True  # noqa: E711
    assert (t == [1, 3]).numpy().tolist() == [True, False]
    mismatch = t == tf.constant([1, 2, 3])
    assert mismatch.shape == () and not bool(mismatch)
    assert bool(t != tf.constant([1, 2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.equal(t, tf.constant([1, 2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        t == tf.constant([1.0, 2.0])  # noqa: B015


def test_tensors_and_variables_stay_unhashable():
    with pytest.raises(TypeError, match="ref"):
        hash(tf.constant(1))
    with pytest.raises(TypeError, match="ref"):
        {tf.Variable(1.0): 1}
    t = tf.constant(1)
    assert {t.ref(): 1}[t.ref()] == 1


def test_logical_ops():
    a = tf.constant([True, True, False, False])
    b = tf.constant([True, False, True, False])
    assert (a & b).numpy().tolist() == [True, False, False, False]
    assert (a | b).numpy().tolist() == [True, True, True, False]
    assert (a ^ b).numpy().tolist() == [False, True, True, False]
    assert (~a).numpy().tolist() == [False, False, True, True]
    assert tf.logical_and(a, True).numpy().tolist() == a.numpy().tolist()
    with pytest.raises(tf.errors.InvalidArgumentError, match="bool"):
        tf.logical_and(tf.constant([1]), tf.constant([1]))


def test_operators_on_variables_read_through_the_tape():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(-v + 2 * v - v / 2 + v**2 + abs(v))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [0.5 + 2 + 1, 0.5 + 4 + 1])


def test_reflected_operators_with_numpy_arrays_return_tensors():
    t = tf.constant([1.0, 2.0])
    out = np.array([1.0, 1.0], np.float32) + t
    assert isinstance(out, tf.Tensor)
    assert out.numpy().tolist() == [2.0, 3.0]


def test_bitwise_operators_on_integer_tensors():
    a = tf.constant([6, 3])
    assert (a & 5).numpy().tolist() == [4, 1]
    assert (a | 1).numpy().tolist() == [7, 3]
    assert (a ^ 1).numpy().tolist() == [7, 2]
    assert (~a).numpy().tolist() == [-7, -4]


def test_augmented_assignment_on_variables_raises_like_tf():
    v = tf.Variable(1.0)
    with pytest.raises(RuntimeError, match="assign_add"):
        v += 1.0
    with pytest.raises(RuntimeError, match="assign_sub"):
        v -= 1.0
    t = tf.constant(1.0)
    t += 1.0  # a tensor just rebinds
    assert float(t) == 2.0
