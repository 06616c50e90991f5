"""simdist.errors mirrors tf.errors: names, codes, messages, and OpError as the base."""

import pytest

from simdist import errors


@pytest.mark.parametrize(
    "name, code",
    [
        ("InvalidArgumentError", 3),
        ("NotFoundError", 5),
        ("OutOfRangeError", 11),
        ("UnimplementedError", 12),
        ("DeadlineExceededError", 4),
        ("AbortedError", 10),
    ],
)
def test_error_classes_have_tf_names_and_codes(name, code):
    cls = getattr(errors, name)
    err = cls(None, None, "what went wrong")
    assert isinstance(err, errors.OpError)
    assert err.error_code == code
    assert str(err) == "what went wrong" and err.message == "what went wrong"


def test_message_only_constructor():
    err = errors.InvalidArgumentError("bad shape")
    assert str(err) == "bad shape" and err.node_def is None
