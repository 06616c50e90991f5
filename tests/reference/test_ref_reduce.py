"""Reference `reduce`: the API page's examples, errors, and the algebraic laws."""

import enum

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


class FakeReduceOp(enum.Enum):
    SUM = "SUM"
    MEAN = "MEAN"


def test_sum_of_replica_ids_is_one():
    # API page: two replicas return their replica id; reduce("SUM", ..., axis=None) -> 1.
    total = ref.reduce("SUM", [np.int32(0), np.int32(1)], axis=None)
    assert total.shape == ()
    assert total == 1


def test_axis_none_adds_elementwise_and_axis_zero_adds_everything():
    # API page: examples [0,1,2,3] on replica 0 and [4,5,6,7] on replica 1.
    per_replica = [np.arange(4), np.arange(4, 8)]
    np.testing.assert_array_equal(
        ref.reduce("sum", per_replica, axis=None), [0 + 4, 1 + 5, 2 + 6, 3 + 7]
    )
    assert ref.reduce("sum", per_replica, axis=0) == 0 + 1 + 2 + 3 + 4 + 5 + 6 + 7


def test_partial_batch_mean_with_axis_uses_denominator_six():
    # API page: last batch of size 6 split [0,1,2,3] and [4,5]; MEAN axis=0 divides by 6.
    per_replica = [np.array([0.0, 1, 2, 3]), np.array([4.0, 5])]
    assert ref.reduce("MEAN", per_replica, axis=0) == pytest.approx(15 / 6)
    mean_of_means = ref.reduce("MEAN", [np.mean(v) for v in per_replica], axis=None)
    assert mean_of_means == pytest.approx(3.0)  # weighs values 1/8 and 1/4: not 2.5
    with pytest.raises(ValueError, match="axis=0"):
        ref.reduce("SUM", per_replica, axis=None)


def test_op_names_case_insensitive_and_enum_like():
    values = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    for op in ("SUM", "sum", "Sum", FakeReduceOp.SUM):
        np.testing.assert_array_equal(ref.reduce(op, values), [4.0, 6.0])
    for op in ("mean", FakeReduceOp.MEAN):
        np.testing.assert_array_equal(ref.reduce(op, values), [2.0, 3.0])


def test_unknown_op_is_value_error_and_garbage_is_type_error():
    with pytest.raises(ValueError, match="not a valid ReduceOp"):
        ref.reduce("MAX", [np.ones(2)])
    with pytest.raises(TypeError):
        ref.reduce(3, [np.ones(2)])


@pytest.mark.parametrize("axis", [2, -3])
def test_axis_out_of_range_is_value_error_with_tf_message(axis):
    with pytest.raises(ValueError, match=f"`axis` = {axis} out of range for `value` with rank 2"):
        ref.reduce("MEAN", [np.ones((2, 3))], axis=axis)
    with pytest.raises(ValueError, match="out of range"):
        ref.reduce("SUM", [np.ones((2, 3))], axis=axis)


def test_scalar_with_axis_is_out_of_range():
    with pytest.raises(ValueError, match="rank 0"):
        ref.reduce("SUM", [np.float64(1.0), np.float64(2.0)], axis=0)


def test_negative_and_tuple_axes():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(6.0, 12.0).reshape(2, 3)
    np.testing.assert_allclose(ref.reduce("MEAN", [a, b], axis=-1), (a.sum(1) + b.sum(1)) / 6)
    assert ref.reduce("MEAN", [a, b], axis=(0, 1)) == pytest.approx(np.arange(12.0).mean())


def test_empty_replicas_allowed_with_axis():
    per_replica = [np.array([2.0, 4.0]), np.zeros((0,))]
    assert ref.reduce("MEAN", per_replica, axis=0) == 3.0
    assert ref.reduce("SUM", per_replica, axis=0) == 6.0
    assert np.isnan(ref.reduce("MEAN", [np.zeros((0,)), np.zeros((0,))], axis=0))


def test_shapes_must_agree_outside_the_axis():
    with pytest.raises(ValueError, match="differ"):
        ref.reduce("SUM", [np.ones((2, 3)), np.ones((2, 4))], axis=0)


def test_integer_sum_is_exact_and_mean_is_float():
    big = np.int64(2**53 + 1)
    assert ref.reduce("SUM", [big, np.int64(0)]) == 2**53 + 1
    mean = ref.reduce("MEAN", [np.int32(1), np.int32(2)])
    assert mean.dtype == np.float64 and mean == 1.5


def test_reduce_non_distributed():
    assert ref.reduce_non_distributed("MEAN", 3.0, num_replicas=4) == 3.0
    assert ref.reduce_non_distributed("SUM", 3.0, num_replicas=1) == 3.0
    assert ref.reduce_non_distributed("SUM", 0.0, num_replicas=4) == 0.0
    with pytest.raises(ValueError, match="cannot be reduced"):
        ref.reduce_non_distributed("SUM", 3.0, num_replicas=2)


def test_per_replica_must_be_a_nonempty_list():
    with pytest.raises(TypeError):
        ref.reduce("SUM", np.ones(3))
    with pytest.raises(ValueError):
        ref.reduce("SUM", [])


floats = st.floats(-1e3, 1e3, allow_nan=False)


@st.composite
def same_shape_replicas(draw):
    n = draw(st.integers(1, 8))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    return [draw(hnp.arrays(np.float64, shape, elements=floats)) for _ in range(n)]


@st.composite
def batched_replicas(draw):
    """Per-replica batches of varying (maybe zero) length with a common element shape."""
    n = draw(st.integers(1, 8))
    inner = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    sizes = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    return [draw(hnp.arrays(np.float64, (s, *inner), elements=floats)) for s in sizes]


@given(same_shape_replicas())
def test_sum_is_n_times_mean(values):
    np.testing.assert_allclose(
        ref.reduce("SUM", values), len(values) * ref.reduce("MEAN", values), rtol=1e-12, atol=1e-9
    )


@given(batched_replicas())
def test_reduce_with_axis_equals_reduce_of_concatenation(values):
    concatenated = np.concatenate(values, axis=0)
    np.testing.assert_allclose(
        ref.reduce("SUM", values, axis=0), concatenated.sum(axis=0), rtol=1e-12, atol=1e-9
    )
    if concatenated.shape[0] > 0:
        np.testing.assert_allclose(
            ref.reduce("MEAN", values, axis=0), concatenated.mean(axis=0), rtol=1e-12, atol=1e-9
        )


@given(same_shape_replicas())
def test_reduce_is_invariant_to_replica_order_up_to_rounding(values):
    np.testing.assert_allclose(
        ref.reduce("SUM", values), ref.reduce("SUM", values[::-1]), rtol=1e-12, atol=1e-9
    )
