"""``image_projective_transform`` against TF 2.21's ``ImageProjectiveTransformV3``: random
affine and projective transforms, every fill mode and interpolation, another output shape,
outputs and the gradient with respect to the images (TF's registered one)."""

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
        if tf.__name__ == "simdist":
            from simdist.core.ops.transform_ops import image_projective_transform as op
        else:
            def op(images, transforms, shape, fill_mode, interpolation, fill_value):
                return tf.raw_ops.ImageProjectiveTransformV3(
                    images=images, transforms=transforms, output_shape=shape,
                    fill_value=fill_value, fill_mode=fill_mode.upper(),
                    interpolation=interpolation.upper())
        rng = np.random.default_rng(0)
        images = tf.constant(rng.standard_normal((2, 5, 7, 2)).astype("float32"))
        out = {"out": [], "grad": []}
        for i in range(6):
            angle, scale = rng.uniform(-3, 3, 2), rng.uniform(0.3, 2.5, 2)
            t = np.zeros((2, 8), np.float32)
            t[:, 0], t[:, 1] = np.cos(angle) * scale, -np.sin(angle) * scale
            t[:, 3], t[:, 4] = np.sin(angle) * scale, np.cos(angle) * scale
            t[:, 2], t[:, 5] = rng.uniform(-12, 12, 2), rng.uniform(-12, 12, 2)
            if i % 2:
                t[:, 6:] = rng.uniform(-0.05, 0.05, (2, 2))
            shape = [6, 4] if i == 3 else [5, 7]
            for fill_mode in ("reflect", "wrap", "constant", "nearest"):
                for interpolation in ("nearest", "bilinear"):
                    with tf.GradientTape() as tape:
                        tape.watch(images)
                        y = op(images, t, shape, fill_mode, interpolation, 0.5)
                        w = np.arange(np.prod(y.shape)).reshape(tuple(y.shape)) / 100
                        loss = tf.reduce_sum(y * w.astype("float32"))
                    out["out"].append(y.numpy())
                    out["grad"].append(tape.gradient(loss, images).numpy())
        return out
    """
)


def test_transform_matches_tf():
    ours = tf_oracle.run_simdist(_CASE)
    theirs, failures = tf_oracle.run_tf({"transform": (_CASE, ours, 1)})
    assert not failures, failures
    tf_oracle.assert_match("transform", ours, theirs["transform"], rtol=1e-5, atol=1e-5)
