"""Device names: every TF spelling resolves to one canonical name; scopes place tensors."""

import pytest

import simdist as tf
from simdist.core.device import canonical_name


@pytest.mark.parametrize(
    "name, canonical",
    [
        ("GPU:0", "/job:localhost/replica:0/task:0/device:GPU:0"),
        ("/gpu:1", "/job:localhost/replica:0/task:0/device:GPU:1"),
        ("/device:GPU:2", "/job:localhost/replica:0/task:0/device:GPU:2"),
        ("cpu", "/job:localhost/replica:0/task:0/device:CPU:0"),
        ("/job:worker/task:1/device:GPU:3", "/job:worker/replica:0/task:1/device:GPU:3"),
        (
            "/job:localhost/replica:0/task:0/device:TPU:7",
            "/job:localhost/replica:0/task:0/device:TPU:7",
        ),
    ],
)
def test_canonical_names(name, canonical):
    assert canonical_name(name) == canonical


@pytest.mark.parametrize("bad", ["GPU:x", "/foo:1", "/device:NPU:0", "/task:a"])
def test_bad_names_raise_value_error_with_the_fix(bad):
    with pytest.raises(ValueError, match="device"):
        canonical_name(bad)


def test_device_scope_places_tensors_and_nests():
    with tf.device("/job:worker/task:1"):
        with tf.device("GPU:1"):
            t = tf.constant(1.0)
        u = tf.constant(2.0)
    assert t.device == "/job:worker/replica:0/task:1/device:GPU:1"
    assert u.device == "/job:worker/replica:0/task:1/device:CPU:0"
    assert tf.constant(0).device == "/job:localhost/replica:0/task:0/device:CPU:0"
