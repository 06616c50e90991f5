"""The demo's synthetic digits: shaped like Fashion-MNIST, deterministic, learnable."""

import numpy as np
import pytest

from simdist.sim import load_synthetic_digits
from simdist.sim.synthetic_digits import GLYPHS


def test_shapes_and_dtypes_match_keras_loaders():
    (x, y), (xt, yt) = load_synthetic_digits(50, 20)
    assert x.shape == (50, 28, 28) and x.dtype == np.uint8
    assert y.shape == (50,) and y.dtype == np.uint8 and set(np.unique(y)) <= set(range(10))
    assert xt.shape == (20, 28, 28) and yt.shape == (20,)


def test_same_seed_same_bytes_other_seed_other_bytes():
    a = load_synthetic_digits(30, 5, seed=1)
    b = load_synthetic_digits(30, 5, seed=1)
    c = load_synthetic_digits(30, 5, seed=2)
    assert np.array_equal(a[0][0], b[0][0]) and np.array_equal(a[1][1], b[1][1])
    assert not np.array_equal(a[0][0], c[0][0])


def test_glyphs_are_distinct():
    flat = GLYPHS.reshape(10, -1)
    assert len({row.tobytes() for row in flat}) == 10


def test_classes_are_balanced_and_images_are_not_blank():
    (x, y), _ = load_synthetic_digits(2000, 0)
    counts = np.bincount(y, minlength=10)
    assert counts.min() > 150  # about 200 each
    ink = (x > 128).reshape(len(x), -1).sum(axis=1)
    assert ink.min() > 10  # every image carries a glyph


def test_negative_size_is_rejected():
    with pytest.raises(ValueError, match="must be >= 0"):
        load_synthetic_digits(-1, 0)
