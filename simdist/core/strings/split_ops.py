"""Splitting strings into ragged tokens: ``split``, ``unicode_split``, ``unicode_decode``,
``bytes_split``, and ``ngrams`` of token sequences.

A rank-0 input gives a dense vector of its pieces; a rank-N input a RaggedTensor of rank N+1
whose last dimension is ragged (a dense input of rank 2 or more keeps its dense dimensions as
uniform ragged ones, as TF's). A RaggedTensor input is split through its ``flat_values``.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.ragged.ragged_tensor import RaggedTensor, is_ragged
from simdist.core.strings._text import as_bytes, string_array, string_tensor
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["split", "unicode_split", "unicode_decode", "bytes_split", "ngrams"]


def _pieces(input, op: str, cut, make_values):
    """``cut(bytes) -> list`` over every string, as a tensor/ragged tensor of the pieces."""
    if is_ragged(input):
        return input.with_flat_values(_pieces(input.flat_values, op, cut, make_values))
    array = string_array(input, op)
    if array.ndim == 0:
        return make_values(cut(array[()]))
    rows = [cut(b) for b in array.ravel().tolist()]
    values = make_values([p for row in rows for p in row])
    flat = RaggedTensor.from_row_lengths(values, [len(r) for r in rows], validate=False)
    if array.ndim == 1:
        return flat
    outer = list(array.shape)
    result = flat
    for size in reversed(outer[1:]):  # uniform dense dimensions, innermost first
        count = result.nrows().numpy() // size
        splits = np.arange(count + 1, dtype=np.int64) * size
        result = RaggedTensor.from_row_splits(result, splits, validate=False)
    return result


def _strings(pieces: list) -> Tensor:
    return string_tensor(pieces, (len(pieces),))


def split(input, sep=None, maxsplit=-1, name=None):
    """Split each string at ``sep`` (runs of ASCII whitespace when None or empty), at most
    ``maxsplit`` times (all when -1): ``tf.strings.split``.

    >>> import simdist as tf
    >>> tf.strings.split(["hello world", "a"])
    <tf.RaggedTensor [[b'hello', b'world'], [b'a']]>
    """
    separator = None if sep is None else as_bytes(sep)
    if separator == b"":
        separator = None
    limit = -1 if maxsplit is None else int(maxsplit)
    return _pieces(input, "StringSplitV2", lambda b: b.split(separator, limit), _strings)


def _decode(b: bytes, errors_mode: str, replacement: int) -> list[int]:
    if errors_mode == "strict":
        try:
            text = b.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise errors.InvalidArgumentError(
                f"Invalid formatting on input string: {b!r} is not valid UTF-8 "
                "[Op:UnicodeDecodeWithOffsets]"
            ) from exc
        return [ord(c) for c in text]
    text = b.decode("utf-8", "replace" if errors_mode == "replace" else "ignore")
    return [replacement if c == "\ufffd" and errors_mode == "replace" else ord(c) for c in text]


def _check_encoding(encoding: str) -> None:
    if encoding.upper().replace("_", "-") not in ("UTF-8", "UTF8"):
        raise errors.UnimplementedError(
            f"simdist decodes UTF-8 only, not {encoding!r} (docs/differences.md)."
        )


def unicode_decode(
    input,
    input_encoding,
    errors="replace",
    replacement_char=65533,
    replace_control_characters=False,
    name=None,
):
    """Each string's Unicode code points (int32), one ragged row per string."""
    _check_encoding(input_encoding)

    def ints(points: list) -> Tensor:
        return make_tensor(np.asarray(points, np.int32).reshape(-1), dtypes.int32)

    return _pieces(input, "UnicodeDecode", lambda b: _decode(b, errors, replacement_char), ints)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):
    """Each string's characters, each as its UTF-8 bytes."""
    _check_encoding(input_encoding)

    def chars(b: bytes) -> list[bytes]:
        return [
            chr(p).encode("utf-8", "surrogatepass") for p in _decode(b, errors, replacement_char)
        ]

    return _pieces(input, "UnicodeSplit", chars, _strings)


def bytes_split(input, name=None):
    """Each string's bytes, one-byte strings."""
    return _pieces(input, "BytesSplit", lambda b: [b[i : i + 1] for i in range(len(b))], _strings)


# --- ngrams ------------------------------------------------------------------------------
def _row_ngrams(row: list, widths: list[int], sep: bytes, pads, padding_width, preserve):
    out = []
    for width in widths:
        pad = width - 1 if padding_width is None else padding_width
        tokens = [pads[0]] * pad + row + [pads[1]] * pad if pads is not None else row
        grams = [sep.join(tokens[i : i + width]) for i in range(len(tokens) - width + 1)]
        if not grams and preserve and tokens:
            grams = [sep.join(tokens)]
        out += grams
    return out


def ngrams(
    data,
    ngram_width,
    separator=" ",
    pad_values=None,
    padding_width=None,
    preserve_short_sequences=False,
    name=None,
):
    """The ``ngram_width``-grams (an int, or several widths) of each row's tokens, joined by
    ``separator``; ``pad_values`` (one string, or a (left, right) pair) pads each side with
    ``padding_width`` tokens (``width - 1`` by default).

    Raises:
        ValueError: a padding width below 1, or one that needs ``pad_values``.
        InvalidArgumentError: a width below 1.
    """
    widths = [int(ngram_width)] if np.ndim(ngram_width) == 0 else [int(w) for w in ngram_width]
    if any(w < 1 for w in widths):
        raise errors.InvalidArgumentError(f"Requested ngram width must be > 0, got {widths}.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be specified if padding_width is set.")
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if pad_values is not None:
        pads = (pad_values, pad_values) if isinstance(pad_values, (str, bytes)) else pad_values
        pads = tuple(as_bytes(p) for p in pads)
    else:
        pads = None
    sep = as_bytes(separator)

    def per_row(rows: list) -> list:
        return [
            _row_ngrams(r, widths, sep, pads, padding_width, preserve_short_sequences) for r in rows
        ]

    if is_ragged(data):
        if is_ragged(data.values):
            return data.with_values(
                ngrams(
                    data.values,
                    ngram_width,
                    separator,
                    pad_values,
                    padding_width,
                    preserve_short_sequences,
                )
            )
        tokens = string_array(data.values, "NGrams").tolist()
        s = data.row_splits._value.tolist()
        grams = per_row([tokens[s[i] : s[i + 1]] for i in range(len(s) - 1)])
        values = _strings([g for row in grams for g in row])
        return RaggedTensor.from_row_lengths(values, [len(r) for r in grams], validate=False)
    array = string_array(data, "NGrams")
    if array.ndim == 0:
        raise ValueError("ngrams needs data of rank 1 or more (a sequence of tokens).")
    rows = array.reshape(-1, array.shape[-1]).tolist()
    grams = per_row(rows)
    count = len(grams[0]) if grams else 0
    return string_tensor([g for row in grams for g in row], (*array.shape[:-1], count))
