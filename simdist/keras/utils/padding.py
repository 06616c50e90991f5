"""``pad_sequences``: a list of sequences as one array of equal-length rows (Keras 2's).

Each sequence is cut to ``maxlen`` (``truncating='pre'`` keeps its end, ``'post'`` its
start) and padded with ``value`` (``padding='pre'`` before it, ``'post'`` after) in an
array of ``dtype``; ``maxlen=None`` is the longest length. Items of a sequence may be arrays
of one shape (the rows then have it after the time axis).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pad_sequences"]


def pad_sequences(
    sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0
) -> np.ndarray:
    """``[len(sequences), maxlen, ...]`` of ``dtype`` (see the module docstring).

    Raises:
        ValueError: ``sequences`` not a list of iterables; a string ``value`` with a
            non-string, non-object ``dtype``; an unknown ``padding``/``truncating``; an item
            shape that differs from the first non-empty sequence's.
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, sample_shape, seen = [], (), False
    for seq in sequences:
        try:
            lengths.append(len(seq))
        except TypeError as error:
            raise ValueError(
                f"`sequences` must be a list of iterables. Found non-iterable: {seq}"
            ) from error
        if not seen and len(seq):
            sample_shape, seen = np.asarray(seq).shape[1:], True
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    is_text = np.issubdtype(np.dtype(dtype), np.str_) if dtype is not object else False
    if isinstance(value, str) and dtype is not object and not is_text:
        raise ValueError(
            f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
            "You should set `dtype=object` for variable length strings."
        )
    out = np.full((len(sequences), maxlen, *sample_shape), value, dtype=dtype)
    for index, seq in enumerate(sequences):
        if not len(seq):
            continue
        if truncating == "pre":
            kept = seq[-maxlen:] if maxlen else seq[:0]
        elif truncating == "post":
            kept = seq[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != sample_shape:
            raise ValueError(
                f"Shape of sample {kept.shape[1:]} of sequence at position {index} is different "
                f"from expected shape {sample_shape}"
            )
        if padding == "post":
            out[index, : len(kept)] = kept
        elif padding == "pre":
            if len(kept):
                out[index, -len(kept) :] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out
