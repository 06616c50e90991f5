"""The documented error classes (docs/errors.md) are what the fuzz suite checks against."""

import pytest

import simdist as tf
from simdist.keras.optimizers.gradient_lists import MissingGradientOnReplica
from tests.fuzz.contract import DOCUMENTED, check_error, outcome


def test_the_list_holds_tf_classes_and_python_ones():
    assert tf.errors.OpError in DOCUMENTED and ValueError in DOCUMENTED
    assert TypeError in DOCUMENTED and OSError in DOCUMENTED
    assert not any(issubclass(c, (IndexError, AttributeError)) for c in DOCUMENTED)


@pytest.mark.parametrize(
    "error",
    [
        IndexError("i"),
        AttributeError("a"),
        RecursionError("r"),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"),
        ZeroDivisionError("z"),
        ValueError(""),
        AssertionError("a"),
    ],  # fmt: skip
)
def test_internal_errors_and_empty_messages_fail_the_contract(error):
    with pytest.raises(AssertionError):
        check_error(error)


def test_documented_errors_pass():
    assert outcome(tf.reduce_sum, tf.constant([1.0]), axis=3)[0] == "raised"
    check_error(tf.errors.InvalidArgumentError("bad axis"))
    check_error(MissingGradientOnReplica("b is None on replica 0"))  # a ValueError too
