"""clip_by_norm, global_norm, clip_by_global_norm: TF's formulas, NaN rules and gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import simdist as tf
from tests.gradcheck import check_gradients

FLOATS = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                    elements=st.floats(-10, 10))


@settings(max_examples=60)
@given(arrays=st.lists(FLOATS, min_size=1, max_size=3), clip=st.floats(0.1, 20))
def test_clip_by_global_norm_matches_the_formula(arrays, clip):
    norm = np.sqrt(sum(np.sum(a * a) for a in arrays))
    clipped, got_norm = tf.clip_by_global_norm(arrays, clip)
    np.testing.assert_allclose(float(got_norm), norm, rtol=1e-12)
    scale = clip / max(norm, clip)
    for c, a in zip(clipped, arrays, strict=True):
        np.testing.assert_allclose(c.numpy(), a * scale, rtol=1e-12, atol=1e-300)
    after = np.sqrt(sum(np.sum(c.numpy() ** 2) for c in clipped))
    assert after <= clip * (1 + 1e-9)


@settings(max_examples=60)
@given(a=FLOATS, clip=st.floats(0.1, 20), data=st.data())
def test_clip_by_norm_matches_the_formula_per_axis(a, clip, data):
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(0, a.ndim - 1), min_size=1,
                                                      max_size=a.ndim, unique=True)))
    norm = np.sqrt(np.sum(a * a, axis=None if axes is None else tuple(axes), keepdims=True))
    np.testing.assert_allclose(tf.clip_by_norm(a, clip, axes=axes).numpy(),
                               a * clip / np.maximum(norm, clip), rtol=1e-12, atol=1e-300)


def test_gradients_flow_through_the_norm_as_in_tf():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)) * 3, rng.standard_normal(4) * 3
    check_gradients(lambda x, y: tf.concat(
        [tf.reshape(t, [-1]) for t in tf.clip_by_global_norm([x, y], 1.0)[0]], 0), a, b)
    check_gradients(lambda x: tf.clip_by_norm(x, 1.0, axes=[1]), a)
    # a zero norm gives a zero value and a finite gradient (TF's safe sqrt)
    z = tf.zeros([3], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(z)
        out = tf.clip_by_norm(z, 1.0)
    assert np.all(np.isfinite(tape.gradient(out, z).numpy())) and not out.numpy().any()


def test_none_entries_and_non_finite_norms_as_tf():
    clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), None], 1.0)
    assert clipped[1] is None and float(norm) == 5.0
    np.testing.assert_allclose(clipped[0].numpy(), [0.6, 0.8], rtol=1e-6)
    clipped, norm = tf.clip_by_global_norm([tf.constant([np.inf, 4.0])], 1.0)
    assert np.isinf(float(norm)) and np.all(np.isnan(clipped[0].numpy()))
    assert tf.clip_by_norm(tf.constant([3.0, 4.0]), -1.0).numpy().tolist() == [0.0, 0.0]


def test_bad_inputs():
    with pytest.raises(TypeError, match="should be a sequence of tensors"):
        tf.clip_by_global_norm(tf.constant([3.0, 4.0]), 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.clip_by_global_norm([tf.constant([1, 2])], 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.clip_by_norm(tf.constant([3, 4]), 5)
