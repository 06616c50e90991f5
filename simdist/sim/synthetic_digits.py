"""Synthetic digits: a deterministic, download-free 28x28 grayscale 10-class image set.

Each image is one digit glyph from a 5x7 bitmap font, scaled 3x, placed at a random offset
on a 28x28 canvas, with random stroke intensity, optional one-pixel thickening and Gaussian
pixel noise, stored as uint8 in [0, 255] like MNIST. Shapes and dtypes match
``tf.keras.datasets.fashion_mnist.load_data()``, so the seeds' code runs on it unchanged.
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
_SCALE = 3
GLYPHS = np.stack(
    [
        np.kron(
            np.array([[c == "#" for c in row] for row in _FONT[d]], dtype=np.float32),
            np.ones((_SCALE, _SCALE), np.float32),
        )
        for d in range(10)
    ]
)  # (10, 21, 15)


def _make(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    glyph_h, glyph_w = GLYPHS.shape[1:]
    labels = rng.integers(0, 10, size=n).astype(np.uint8)
    dy = rng.integers(0, 28 - glyph_h + 1, size=n)
    dx = rng.integers(0, 28 - glyph_w + 1, size=n)
    canvas = np.zeros((n, 28, 28), np.float32)
    rows = dy[:, None, None] + np.arange(glyph_h)[None, :, None]
    cols = dx[:, None, None] + np.arange(glyph_w)[None, None, :]
    canvas[np.arange(n)[:, None, None], rows, cols] = GLYPHS[labels]
    thicken = rng.random(n) < 0.5
    shifted = np.zeros_like(canvas)
    shifted[:, :, 1:] = canvas[:, :, :-1]
    canvas[thicken] = np.maximum(canvas[thicken], shifted[thicken])
    canvas *= rng.uniform(0.6, 1.0, size=(n, 1, 1)).astype(np.float32)
    canvas += rng.normal(0.0, 0.12, size=canvas.shape).astype(np.float32)
    images = np.clip(np.rint(canvas * 255.0), 0, 255).astype(np.uint8)
    return images, labels


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
