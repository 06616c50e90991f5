"""``tf.nn.conv3d``/``max_pool3d``/``avg_pool3d`` against TF 2.21: strides, SAME and VALID
padding, dilations, and the gradients with respect to the input and the kernel."""

from __future__ import annotations

import textwrap

import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        rng = np.random.default_rng(0)
        x = tf.constant(rng.standard_normal((2, 5, 6, 4, 3)).astype("float32"))
        w = tf.constant(rng.standard_normal((2, 3, 2, 3, 4)).astype("float32"))
        out = {"conv": [], "conv_dx": [], "conv_dw": [], "pool": [], "pool_dx": []}
        for kwargs in [
            dict(strides=[1, 1, 1, 1, 1], padding="VALID"),
            dict(strides=[1, 2, 1, 2, 1], padding="SAME"),
            dict(strides=[1, 1, 1, 1, 1], padding="SAME", dilations=[1, 2, 1, 2, 1]),
            dict(strides=[1, 3, 2, 1, 1], padding="VALID"),
        ]:
            with tf.GradientTape(persistent=True) as tape:
                tape.watch(x)
                tape.watch(w)
                y = tf.nn.conv3d(x, w, **kwargs)
                loss = tf.reduce_sum(y * y)
            out["conv"].append(y.numpy())
            out["conv_dx"].append(tape.gradient(loss, x).numpy())
            out["conv_dw"].append(tape.gradient(loss, w).numpy())
        for pool in (tf.nn.max_pool3d, tf.nn.avg_pool3d):
            for ksize, strides, padding in [
                ([1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
                ([1, 3, 2, 3, 1], [1, 2, 1, 2, 1], "SAME"),
            ]:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = pool(x, ksize, strides, padding)
                    loss = tf.reduce_sum(y * y)
                out["pool"].append(y.numpy())
                out["pool_dx"].append(tape.gradient(loss, x).numpy())
        return out
    """
)


def test_conv3d_and_pooling_match_tf():
    ours = tf_oracle.run_simdist(_CASE)
    theirs, failures = tf_oracle.run_tf({"conv3d": (_CASE, ours, 1)})
    assert not failures, failures
    tf_oracle.assert_match("conv3d", ours, theirs["conv3d"], rtol=1e-5, atol=5e-4)
