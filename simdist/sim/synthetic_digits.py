"""Synthetic digits: a deterministic, download-free 28x28 grayscale 10-class image set.

Each image is one digit glyph from a 5x7 bitmap font, scaled 2-3x in each direction, placed
at a random offset on a 28x28 canvas, slanted by a random shear, crossed by one random
clutter stroke, with random intensity and Gaussian pixel noise (sigma 0.25), stored as uint8
in [0, 255] like MNIST. Shapes and dtypes match
``tf.keras.datasets.fashion_mnist.load_data()``, so the tutorials' code runs on it unchanged.
It is generated, not collected: no licence question, no download, the same bytes for the
same seed on every machine.
"""

from __future__ import annotations

import numpy as np

__all__ = ["load_synthetic_digits", "GLYPHS"]

# 5 columns x 7 rows per digit, '#' = ink.
_FONT = {
    0: [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
    1: ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    2: [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
    3: ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
    4: ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
    5: ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
    6: ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
    7: ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
    8: [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
    9: [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
}
_BITMAPS = np.stack(
    [np.array([[c == "#" for c in row] for row in _FONT[d]], dtype=np.float32) for d in range(10)]
)  # (10, 7, 5)
GLYPHS = np.stack([np.kron(b, np.ones((3, 3), np.float32)) for b in _BITMAPS])  # (10, 21, 15)


def _glyphs(scale_h: int, scale_w: int) -> np.ndarray:
    return np.stack([np.kron(b, np.ones((scale_h, scale_w), np.float32)) for b in _BITMAPS])


_SCALES = ((2, 2), (2, 3), (3, 2), (3, 3))  # font pixel -> canvas pixels (rows, columns)
_CHUNK = 4096  # images drawn at a time: the float work arrays stay ~30 MB at any size


def _make(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` images and labels. Every random draw is made in one fixed order (the per-image
    numbers first, then the pixel noise chunk after chunk, one continuous stream), so the
    bytes do not depend on ``_CHUNK``; the float work arrays cover one chunk at a time."""
    labels = rng.integers(0, 10, size=n).astype(np.uint8)
    # Glyph size varies (2x2 to 3x3 font pixels); position varies over the whole canvas.
    scales = rng.integers(0, 4, size=n)
    dy = np.zeros(n, np.int64)
    dx = np.zeros(n, np.int64)
    for k, (sh, sw) in enumerate(_SCALES):
        idx = np.flatnonzero(scales == k)
        if idx.size == 0:
            continue
        dy[idx] = rng.integers(0, 28 - 7 * sh + 1, size=idx.size)
        dx[idx] = rng.integers(0, 28 - 5 * sw + 1, size=idx.size)
    shear = rng.uniform(-0.35, 0.35, size=n)
    pos = rng.integers(0, 28, size=n)
    start = rng.integers(0, 20, size=n)
    length = rng.integers(3, 9, size=n)
    horizontal = rng.random(n) < 0.5
    intensity = rng.uniform(0.5, 1.0, size=(n, 1, 1)).astype(np.float32)
    images = np.empty((n, 28, 28), np.uint8)
    for first in range(0, n, _CHUNK):
        part = slice(first, min(n, first + _CHUNK))
        canvas = _draw(labels[part], scales[part], dy[part], dx[part], shear[part])
        _add_stroke(canvas, pos[part], start[part], length[part], horizontal[part])
        canvas *= intensity[part]
        canvas += rng.normal(0.0, 0.25, size=canvas.shape).astype(np.float32)
        images[part] = np.clip(np.rint(canvas * 255.0), 0, 255)
    return images, labels


def _draw(labels, scales, dy, dx, shear) -> np.ndarray:
    """The glyphs placed on their canvases, then slanted."""
    canvas = np.zeros((labels.size, 28, 28), np.float32)
    for k, (sh, sw) in enumerate(_SCALES):
        idx = np.flatnonzero(scales == k)
        if idx.size == 0:
            continue
        glyphs = _glyphs(sh, sw)
        gh, gw = glyphs.shape[1:]
        rows = dy[idx][:, None, None] + np.arange(gh)[None, :, None]
        cols = dx[idx][:, None, None] + np.arange(gw)[None, None, :]
        canvas[idx[:, None, None], rows, cols] = glyphs[labels[idx]]
    # Slant: shift each row sideways in proportion to its distance from the middle row.
    shifts = np.rint(shear[:, None] * (np.arange(28) - 13.5)[None, :]).astype(int)
    cols = (np.arange(28)[None, None, :] - shifts[:, :, None]) % 28
    return np.take_along_axis(canvas, cols, axis=2)


def _add_stroke(canvas, pos, start, length, horizontal) -> None:
    """Clutter: one random horizontal or vertical stroke that is not part of the digit."""
    span = np.arange(28)[None, :]
    stroke = ((span >= start[:, None]) & (span < (start + length)[:, None])).astype(np.float32)
    canvas[horizontal, pos[horizontal], :] = np.maximum(
        canvas[horizontal, pos[horizontal], :], 0.7 * stroke[horizontal]
    )
    vertical = ~horizontal
    canvas[vertical, :, pos[vertical]] = np.maximum(
        canvas[vertical, :, pos[vertical]], 0.7 * stroke[vertical]
    )


def load_synthetic_digits(
    num_train: int = 60000, num_test: int = 10000, seed: int = 0
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(train_images, train_labels), (test_images, test_labels)``, uint8, like Keras loaders.

    Args:
        num_train: training images (default 60000, as Fashion-MNIST).
        num_test: test images (default 10000).
        seed: the generator's seed; train and test come from independent streams.

    Raises:
        ValueError: a negative size.
    """
    if num_train < 0 or num_test < 0:
        raise ValueError(f"Sizes must be >= 0, got num_train={num_train}, num_test={num_test}.")
    train_rng, test_rng = (np.random.default_rng([seed, stream]) for stream in (0, 1))
    return _make(num_train, train_rng), _make(num_test, test_rng)
