"""Shape and creation ops: values vs NumPy, gradients vs finite differences, TF's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from simdist.core.ops import array_ops
from tests.gradcheck import check_gradients

GRAD_SETTINGS = settings(max_examples=15)
shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3)


def array(shape):
    return hnp.arrays(np.float64, shape, elements=st.floats(-3, 3, allow_nan=False, width=64))


# --- reshape / expand_dims / squeeze / transpose -----------------------------------------------
@GRAD_SETTINGS
@given(shape=shapes, data=st.data())
def test_reshape_with_inferred_dim(shape, data):
    x = data.draw(array(shape))
    target = [-1, shape[-1]]
    np.testing.assert_array_equal(tf.reshape(x, target).numpy(), x.reshape(target))
    check_gradients(lambda t: tf.reshape(t, target), x)


def test_reshape_errors_say_what_was_wrong():
    x = tf.zeros([2, 3])
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match="Input to reshape is a tensor with 6 values, but the requested shape has 4",
    ):
        tf.reshape(x, [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="requires a multiple of 4"):
        tf.reshape(x, [-1, 4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Only one input size may be -1"):
        tf.reshape(x, [-1, -1])
    assert tf.reshape(x, tf.constant([3, 2])).shape == (3, 2)
    assert tf.reshape(x, tf.TensorShape([6])).shape == (6,)


def test_expand_dims_and_squeeze():
    x = tf.zeros([2, 3])
    assert tf.expand_dims(x, 0).shape == (1, 2, 3)
    assert tf.expand_dims(x, -1).shape == (2, 3, 1)
    assert tf.expand_dims(x, 2).shape == (2, 3, 1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.expand_dims(x, 3)
    y = tf.zeros([1, 2, 1])
    assert tf.squeeze(y).shape == (2,)
    assert tf.squeeze(y, axis=[0]).shape == (2, 1)
    assert tf.squeeze(y, axis=-1).shape == (1, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can not squeeze dim\\[1\\]"):
        tf.squeeze(y, axis=1)
    check_gradients(lambda t: tf.squeeze(tf.expand_dims(t, 1)), np.ones((2, 1)))


@GRAD_SETTINGS
@given(shape=shapes, data=st.data())
def test_transpose(shape, data):
    x = data.draw(array(shape))
    perm = data.draw(st.permutations(list(range(len(shape)))))
    np.testing.assert_array_equal(tf.transpose(x, perm).numpy(), np.transpose(x, perm))
    np.testing.assert_array_equal(tf.transpose(x).numpy(), x.T)
    check_gradients(lambda t: tf.transpose(t, perm), x)


# --- concat / stack / unstack / split --------------------------------------------------------
@GRAD_SETTINGS
@given(shape=shapes, n=st.integers(1, 3), data=st.data())
def test_concat_and_stack(shape, n, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    xs = [data.draw(array(shape)) for _ in range(n)]
    np.testing.assert_array_equal(tf.concat(xs, axis).numpy(), np.concatenate(xs, axis))
    np.testing.assert_array_equal(tf.stack(xs, axis).numpy(), np.stack(xs, axis))
    check_gradients(lambda *ts: tf.concat(list(ts), axis), *xs)
    check_gradients(lambda *ts: tf.stack(list(ts), axis), *xs)


def test_concat_and_stack_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="ConcatOp"):
        tf.concat([tf.zeros([2, 3]), tf.zeros([3, 3])], axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Shapes of all inputs must match"):
        tf.stack([tf.zeros([2]), tf.zeros([3])])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.concat([tf.zeros([2]), tf.zeros([2], tf.int32)], axis=0)


def test_unstack_and_split_gradients():
    x = np.arange(12.0).reshape(3, 4)

    def unstack_fn(t):
        rows = tf.unstack(t, axis=1)
        return rows[0] * 2.0 + rows[3]

    check_gradients(unstack_fn, x)
    parts = tf.split(x, [1, -1, 2], axis=1)
    assert [p.shape for p in parts] == [(3, 1), (3, 1), (3, 2)]
    check_gradients(lambda t: tf.split(t, 2, axis=1)[1] * 3.0, x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="evenly divide"):
        tf.split(x, 3, axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.split(x, [1, 1], axis=1)
    assert [t.numpy().tolist() for t in tf.unstack(tf.constant([1, 2]))] == [1, 2]


# --- tile / broadcast_to / pad / where / gather ------------------------------------------------
@GRAD_SETTINGS
@given(shape=shapes, data=st.data())
def test_tile_and_broadcast_to(shape, data):
    x = data.draw(array(shape))
    reps = data.draw(st.lists(st.integers(1, 3), min_size=len(shape), max_size=len(shape)))
    np.testing.assert_array_equal(tf.tile(x, reps).numpy(), np.tile(x, reps))
    check_gradients(lambda t: tf.tile(t, reps), x)
    target = (2,) + tuple(r if d == 1 else d for d, r in zip(shape, reps, strict=True))
    np.testing.assert_array_equal(tf.broadcast_to(x, target).numpy(), np.broadcast_to(x, target))
    check_gradients(lambda t: tf.broadcast_to(t, target), x)


def test_broadcast_to_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unable to broadcast"):
        tf.broadcast_to(tf.zeros([2]), [3])


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_modes(mode):
    x = np.arange(6.0).reshape(2, 3)
    paddings = [[1, 1], [2, 1]]
    ours = tf.pad(x, paddings, mode=mode).numpy()
    np.testing.assert_array_equal(ours, np.pad(x, paddings, mode=mode.lower()))
    check_gradients(lambda t: tf.pad(t, paddings, mode=mode), x)


def test_pad_constant_value_and_errors():
    out = tf.pad(tf.constant([1, 2]), [[1, 0]], constant_values=9)
    assert out.numpy().tolist() == [9, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.pad(tf.zeros([2]), [[2, 0]], mode="REFLECT")


@GRAD_SETTINGS
@given(data=st.data())
def test_where_selects_and_routes_gradients(data):
    pair = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=2, max_side=3))
    cond_shape, x_shape, y_shape = pair.input_shapes
    cond = data.draw(hnp.arrays(np.bool_, cond_shape))
    x, y = data.draw(array(x_shape)), data.draw(array(y_shape))
    np.testing.assert_array_equal(tf.where(cond, x, y).numpy(), np.where(cond, x, y))
    check_gradients(lambda a, b: tf.where(cond, a, b), x, y)


def test_where_with_condition_only_gives_coordinates():
    out = tf.where(tf.constant([[True, False], [False, True]]))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [[0, 0], [1, 1]]


@GRAD_SETTINGS
@given(shape=shapes, data=st.data())
def test_gather_with_repeats(shape, data):
    x = data.draw(array(shape))
    axis = data.draw(st.integers(0, len(shape) - 1))
    idx = data.draw(
        hnp.arrays(
            np.int32,
            data.draw(st.sampled_from([(), (2,), (2, 2)])),
            elements=st.integers(0, shape[axis] - 1),
        )
    )
    np.testing.assert_array_equal(tf.gather(x, idx, axis=axis).numpy(), np.take(x, idx, axis))
    check_gradients(lambda t: tf.gather(t, idx, axis=axis), x)


def test_gather_out_of_range():
    message = r"indices\[1\] = 5 is not in \[0, 3\)"
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf.gather(tf.zeros([3]), [0, 5])


# --- shape / size / rank / identity ------------------------------------------------------
def test_shape_size_rank_identity():
    x = tf.zeros([2, 3])
    assert tf.shape(x).dtype == tf.int32 and tf.shape(x).numpy().tolist() == [2, 3]
    assert int(tf.size(x)) == 6 and int(tf.rank(x)) == 2
    assert tf.shape(x, out_type=tf.int64).dtype == tf.int64
    check_gradients(tf.identity, np.ones(3))


# --- creation ------------------------------------------------------------------------------
def test_zeros_ones_fill_like():
    assert tf.zeros([2]).dtype == tf.float32
    assert tf.ones((2, 1), tf.int32).numpy().tolist() == [[1], [1]]
    assert tf.fill([2], 7).numpy().tolist() == [7, 7] and tf.fill([2], 7).dtype == tf.int32
    assert tf.zeros_like(tf.constant([1, 2])).dtype == tf.int32
    assert tf.ones_like(tf.constant([1, 2]), dtype=tf.float32).numpy().tolist() == [1.0, 1.0]
    assert tf.zeros(3).shape == (3,)
    assert tf.zeros([]).shape == ()


def test_range_dtypes_and_values():
    assert tf.range(5).dtype == tf.int32 and tf.range(5).numpy().tolist() == [0, 1, 2, 3, 4]
    assert tf.range(1, 10, 3).numpy().tolist() == [1, 4, 7]
    assert tf.range(0.0, 1.0, 0.25).dtype == tf.float32
    assert tf.range(3, dtype=tf.float64).dtype == tf.float64
    assert tf.range(5, 0, -2).numpy().tolist() == [5, 3, 1]
    assert tf.range(tf.constant(3, tf.int64)).dtype == tf.int64
    with pytest.raises(tf.errors.InvalidArgumentError, match="delta != 0"):
        tf.range(0, 5, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="start <= limit"):
        tf.range(5, 0, 1)


def test_one_hot():
    out = tf.one_hot([0, 2, 5], depth=3)
    assert out.dtype == tf.float32
    assert out.numpy().tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]  # 5 is out of range
    ints = tf.one_hot(tf.constant([1]), 2, on_value=5, off_value=-1)
    assert ints.dtype == tf.int32 and ints.numpy().tolist() == [[-1, 5]]
    assert tf.one_hot([[0, 1]], 3, axis=0).shape == (3, 1, 2)


def test_convert_list_of_tensors_is_a_differentiable_stack():
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        packed = tf.convert_to_tensor([[a, b], [b, 3.0]])
        y = tf.reduce_sum(packed * packed)
    assert packed.dtype == tf.float32 and packed.shape == (2, 2)
    ga, gb = tape.gradient(y, [a, b])
    assert float(ga) == 2.0 and float(gb) == 8.0
    assert array_ops.stack_nested([1, a], None).numpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("indices", [[0.0], 1.5, [True], np.array([1], np.uint8)])
def test_gather_refuses_indices_that_are_not_int16_32_64_as_tf(indices):
    with pytest.raises(tf.errors.InvalidArgumentError, match="gather indices must be integers"):
        tf.gather([1, 2, 3], indices)


def test_gather_takes_int16_indices():
    out = tf.gather([1, 2, 3], tf.constant([2, 0], tf.int16))
    assert out.numpy().tolist() == [3, 1]


def _gather_reference(p: np.ndarray, i: np.ndarray, axis: int, b: int) -> np.ndarray:
    """Batched gather as its definition reads: batch element by batch element."""
    if b == 0:
        return np.take(p, i, axis=axis)
    return np.stack([_gather_reference(p[n], i[n], axis - 1, b - 1) for n in range(p.shape[0])])


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_gather_with_batch_dims_is_the_gather_of_each_batch_element(data):
    rank = data.draw(st.integers(2, 4), label="params rank")
    shape = data.draw(hnp.array_shapes(min_dims=rank, max_dims=rank, max_side=3), label="shape")
    b = data.draw(st.integers(1, rank - 1), label="batch_dims")
    axis = data.draw(st.integers(b, rank - 1), label="axis")
    extra = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3), label="index dims")
    p = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    i = data.draw(
        hnp.arrays(np.int32, shape[:b] + extra, elements=st.integers(0, shape[axis] - 1)),
        label="indices",
    )
    negative = data.draw(st.booleans(), label="batch_dims counted from the end")
    batch_dims = b - i.ndim if negative and b < i.ndim else b  # -1: all but the last
    v = tf.Variable(p)
    weights = np.random.default_rng(0).standard_normal(
        shape[:axis] + i.shape[b:] + shape[axis + 1 :]
    ).astype(np.float32)
    with tf.GradientTape() as tape:
        out = tf.gather(v, i, axis=axis, batch_dims=batch_dims)
        total = tf.reduce_sum(out * weights)
    np.testing.assert_array_equal(out.numpy(), _gather_reference(p, i, axis, b))
    # The gradient scatters each output's weight back to the slot it was read from.
    expected = np.zeros_like(p)
    flat_p = np.arange(p.size).reshape(shape)
    read_from = _gather_reference(flat_p, i, axis, b).reshape(-1)
    np.add.at(expected.reshape(-1), read_from, weights.reshape(-1))
    np.testing.assert_allclose(tape.gradient(total, v).numpy(), expected, rtol=1e-6, atol=1e-6)
