"""tf.image: resizing (values and gradients), flips, crops, dtype conversion, colour.

Values against TF 2.21 are in the differential snippet ``image`` (tests/differential); here
the rules that hold whatever TF's numbers are.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients

sizes = st.integers(1, 9)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("size", [[3, 4], [9, 11], [5, 7], [1, 1]])
def test_resize_gradients_match_finite_differences(method, size):
    x = np.random.default_rng(0).random((2, 5, 7, 2))
    # Resizing is linear in the pixels, so float32 central differences are exact enough.
    check_gradients(
        lambda v: tf.cast(tf.image.resize(tf.cast(v, tf.float32), size, method=method), tf.float64),
        x, eps=1e-2, rtol=1e-3, atol=1e-4,
    )


@settings(max_examples=40, deadline=None)
@given(h=sizes, w=sizes, c=st.integers(1, 3))
def test_resizing_to_the_same_size_returns_the_image(h, w, c):
    x = np.random.default_rng(h * 100 + w).random((1, h, w, c)).astype(np.float32)
    for method in ("bilinear", "nearest"):
        np.testing.assert_array_equal(tf.image.resize(x, [h, w], method=method).numpy(), x)


@settings(max_examples=40, deadline=None)
@given(h=sizes, w=sizes, fh=st.integers(1, 4), fw=st.integers(1, 4))
def test_nearest_upsampling_by_an_integer_factor_repeats_pixels(h, w, fh, fw):
    x = np.arange(h * w, dtype=np.float32).reshape(1, h, w, 1)
    out = tf.image.resize(x, [h * fh, w * fw], method="nearest").numpy()
    np.testing.assert_array_equal(out, np.repeat(np.repeat(x, fh, axis=1), fw, axis=2))


@settings(max_examples=40, deadline=None)
@given(h=sizes, w=sizes, oh=sizes, ow=sizes)
def test_bilinear_output_stays_within_the_input_range(h, w, oh, ow):
    x = np.random.default_rng(h + 10 * w).random((1, h, w, 1)).astype(np.float32)
    out = tf.image.resize(x, [oh, ow]).numpy()
    assert out.min() >= x.min() - 1e-6 and out.max() <= x.max() + 1e-6


def test_resize_keeps_a_single_image_unbatched_and_gives_float32():
    out = tf.image.resize(np.zeros((4, 4, 3), np.uint8), [2, 2])
    assert out.shape == (2, 2, 3) and out.dtype == tf.float32
    assert tf.image.resize(np.zeros((4, 4, 3), np.uint8), [2, 2], "nearest").dtype == tf.uint8


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"method": "bicubic"}, "'bilinear' and 'nearest'"),
        ({"antialias": True}, "antialias"),
    ],
)
def test_what_simdist_does_not_resize_is_refused(kwargs, match):
    with pytest.raises(NotImplementedError, match=match):
        tf.image.resize(np.zeros((1, 4, 4, 1), np.float32), [2, 2], **kwargs)


def test_a_bad_size_is_named():
    with pytest.raises(tf.errors.InvalidArgumentError, match="output size must be positive"):
        tf.image.resize(np.zeros((1, 4, 4, 1), np.float32), [0, 2])
    with pytest.raises(ValueError, match="must be 3-D"):
        tf.image.resize(np.zeros((4, 4), np.float32), [2, 2])


def test_flips_and_rotations_compose_as_they_should():
    x = np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2)
    np.testing.assert_array_equal(tf.image.flip_left_right(tf.image.flip_left_right(x)), x)
    np.testing.assert_array_equal(tf.image.rot90(tf.image.rot90(x, 3), 1), x)
    np.testing.assert_array_equal(tf.image.rot90(x, 2), tf.image.flip_up_down(x[:, :, ::-1]))
    np.testing.assert_array_equal(tf.image.rot90(x[0], 1).numpy(), np.rot90(x[0], 1))


def test_random_flips_flip_whole_images_and_follow_the_seed():
    x = np.arange(8 * 2 * 3, dtype=np.float32).reshape(8, 2, 3, 1)
    tf.random.set_seed(5)
    first = tf.image.random_flip_left_right(x, seed=1).numpy()
    tf.random.set_seed(5)
    again = tf.image.random_flip_left_right(x, seed=1).numpy()
    np.testing.assert_array_equal(first, again)
    for image, out in zip(x, first, strict=True):
        assert np.array_equal(out, image) or np.array_equal(out, image[:, ::-1])


@settings(max_examples=30, deadline=None)
@given(pixels=st.lists(st.integers(0, 255), min_size=1, max_size=12))
def test_uint8_to_float_and_back_is_the_identity(pixels):
    x = np.asarray(pixels, np.uint8).reshape(1, -1, 1)
    back = tf.image.convert_image_dtype(tf.image.convert_image_dtype(x, tf.float32), tf.uint8)
    np.testing.assert_array_equal(back.numpy(), x)


def test_random_crop_is_a_slice_of_the_value():
    x = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
    out = tf.image.random_crop(x, [2, 3], seed=3).numpy()
    hits = [
        (i, j) for i in range(4) for j in range(4) if np.array_equal(x[i : i + 2, j : j + 3], out)
    ]
    assert len(hits) == 1
    with pytest.raises(tf.errors.InvalidArgumentError, match="none larger than the axis"):
        tf.image.random_crop(x, [6, 1])
