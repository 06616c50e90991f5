"""tf.debugging: each assertion passes when its condition holds and raises TF's error when not."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf

PAIRS = st.integers(1, 4).flatmap(
    lambda n: st.tuples(*[hnp.arrays(np.int32, n, elements=st.integers(-2, 2))] * 2)
)
ORDERS = [
    (tf.debugging.assert_equal, np.equal), (tf.debugging.assert_none_equal, np.not_equal),
    (tf.debugging.assert_greater, np.greater), (tf.debugging.assert_less, np.less),
    (tf.debugging.assert_greater_equal, np.greater_equal),
    (tf.debugging.assert_less_equal, np.less_equal),
]


@settings(max_examples=60)
@given(pair=PAIRS)
def test_comparisons_raise_exactly_when_some_element_fails(pair):
    x, y = pair
    for check, holds in ORDERS:
        if np.all(holds(x, y)):
            assert check(x, y) is None
        else:
            with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold"):
                check(x, y, message="mine")


def test_message_layout_as_tf():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="custom")
    text = str(info.value)
    assert text.startswith("custom\nCondition x == y did not hold.")
    assert "Indices of first 1 different values:\n[[1]]" in text
    assert "Corresponding x values:\n[2]" in text


def test_sign_checks_and_top_level_names():
    tf.debugging.assert_positive([1, 2])
    tf.debugging.assert_non_negative([0.0, 2.0])
    tf.debugging.assert_negative([-1])
    tf.debugging.assert_non_positive([0])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.debugging.assert_positive([1, 0])
    assert tf.assert_equal is tf.debugging.assert_equal and tf.assert_rank is (
        tf.debugging.assert_rank
    )


def test_assert_near_uses_tfs_default_tolerance():
    tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not equal to tolerance"):
        tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-5]))
    tf.debugging.assert_near([1.0], [1.1], atol=0.2)


def test_shape_and_dtype_mismatches_raise_as_equal_does():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        tf.debugging.assert_equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.debugging.assert_equal(tf.constant([1]), tf.constant([1.0]))


def test_assert_rank_and_assert_shapes():
    tf.debugging.assert_rank(tf.ones([2, 2]), 2)
    with pytest.raises(ValueError, match="must have rank 3"):
        tf.debugging.assert_rank(tf.ones([2, 2]), 3)
    tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N", "D")), (tf.ones([3]), ("D",)),
                                (tf.ones([]), ()), (tf.ones([5, 2, 3]), ("*", "N", 3))])
    with pytest.raises(ValueError, match="dimension 0 must have size 3"):
        tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N", "D")), (tf.ones([2]), ("D",))])
    with pytest.raises(ValueError, match="must have rank 1"):
        tf.debugging.assert_shapes([(tf.ones([2, 3]), ("N",))])
    with pytest.raises(ValueError, match="Specified explicitly"):
        tf.debugging.assert_shapes([(tf.ones([2, 3]), (2, 4))])


def test_check_numerics_passes_values_and_gradients_through():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.debugging.check_numerics(x * 3.0, "fine")
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 3.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad : Tensor had NaN values"):
        tf.debugging.check_numerics(tf.constant([1.0, np.nan]), "bad")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had Inf values"):
        tf.debugging.assert_all_finite(tf.constant([np.inf]), "bad")
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.debugging.check_numerics(tf.constant([1]), "bad")
    assert tf.debugging.set_log_device_placement(True) is None
