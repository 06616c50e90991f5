"""The synthetic digits are drawn a chunk at a time: same bytes, memory bounded by a chunk."""

from __future__ import annotations

import tracemalloc

import numpy as np

from simdist.sim import synthetic_digits


def test_the_bytes_do_not_depend_on_the_chunk_size(monkeypatch):
    whole = synthetic_digits.load_synthetic_digits(300, 50, seed=4)
    monkeypatch.setattr(synthetic_digits, "_CHUNK", 7)
    chunked = synthetic_digits.load_synthetic_digits(300, 50, seed=4)
    for split_whole, split_chunked in zip(whole, chunked, strict=True):
        for a, b in zip(split_whole, split_chunked, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)


def test_peak_memory_is_the_images_plus_one_chunk_of_work(monkeypatch):
    monkeypatch.setattr(synthetic_digits, "_CHUNK", 512)
    n = 6000
    tracemalloc.start()
    try:
        (images, labels), _ = synthetic_digits.load_synthetic_digits(n, 0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    one_chunk_float64 = 512 * 28 * 28 * 8  # the largest work array: one chunk's noise
    # Unchunked, the float64 noise and int64 index arrays of all 6000 images (~75 MB) peaked.
    assert peak < images.nbytes + labels.nbytes + 1e6 * n / 1000 + 8 * one_chunk_float64
