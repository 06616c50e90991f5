"""``StringLookup`` and ``IntegerLookup``: tokens to indices (and back), as Keras 2.

The index space is ``[mask_token]`` (when one is set) + ``num_oov_indices`` OOV slots + the
vocabulary. ``adapt(data)`` sets the vocabulary to the distinct tokens by descending count,
ties in descending token order (TF's order), at most ``max_tokens`` indices in all.
A token outside the vocabulary goes to an OOV slot: with one slot, that one; with several,
slot ``Fingerprint64(token) % num_oov_indices`` for strings (FarmHash, as TF) and
``token mod num_oov_indices`` for integers. ``output_mode``: ``'int'`` (int64 indices),
``'one_hot'``, ``'multi_hot'``, ``'count'`` (float32 columns, one per index except the
mask's). ``invert=True`` maps indices back to tokens.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from simdist import errors
from simdist.core.convert import convert_to_tensor
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.strings.farmhash import fingerprint64
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers.preprocessing._encoding import encode
from simdist.keras.layers.preprocessing._inputs import (
    adapt_batches,
    as_array,
    as_bytes,
    ragged_call,
)

__all__ = ["StringLookup", "IntegerLookup"]

_MODES = ("int", "one_hot", "multi_hot", "count")


class _IndexLookup(Layer):
    _STRINGS = True

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token=None,
        vocabulary=None,
        invert=False,
        output_mode="int",
        sparse=False,
        pad_to_max_tokens=False,
        **kwargs,
    ) -> None:
        kwargs.pop("vocabulary_dtype", None)
        kwargs.pop("encoding", None)
        kwargs.setdefault("dtype", "int64")
        super().__init__(**kwargs)
        if output_mode == "tf_idf" or sparse or pad_to_max_tokens:
            raise NotImplementedError(
                f"{type(self).__name__}: output_mode='tf_idf', sparse=True and "
                "pad_to_max_tokens=True are not yet in simdist."
            )
        if output_mode not in _MODES:
            raise ValueError(
                f"`output_mode` must be one of {_MODES + ('tf_idf',)}; received "
                f"output_mode={output_mode!r}"
            )
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be 'int' when `invert` is true.")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: {max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"`num_oov_indices` must be >= 0. Received: {num_oov_indices}")
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.invert = bool(invert)
        self.output_mode = output_mode
        self._vocab: list = []
        self._index: dict = {}
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    # --- the vocabulary ------------------------------------------------------------------
    def _key(self, token):
        return as_bytes(token) if self._STRINGS else int(token)

    def _special_count(self) -> int:
        return self.num_oov_indices + (self.mask_token is not None)

    def set_vocabulary(self, vocabulary) -> None:
        """Use ``vocabulary`` (a list of distinct tokens without the special tokens).

        Raises:
            ValueError: repeated tokens, or the mask/OOV token inside the vocabulary.
        """
        tokens = [self._key(t) for t in np.asarray(as_array(vocabulary)).reshape(-1)]
        if len(set(tokens)) != len(tokens):
            repeated = sorted({t for t in tokens if tokens.count(t) > 1})
            raise ValueError(f"The passed vocabulary has at least one repeated term: {repeated}")
        for special in (self.mask_token, self.oov_token):
            if special is not None and self._key(special) in tokens:
                raise ValueError(
                    f"Found reserved token {special!r} in the passed vocabulary; pass the "
                    "vocabulary without the mask and OOV tokens."
                )
        self._vocab = tokens
        first = self._special_count()
        self._index = {t: first + i for i, t in enumerate(tokens)}

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Set the vocabulary from the tokens of ``data`` (see the module docstring)."""
        counts: Counter = Counter()
        for batch in adapt_batches(data, batch_size, steps):
            counts.update(self._key(t) for t in np.asarray(batch).reshape(-1))
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                counts.pop(self._key(special), None)
        ordered = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
        tokens = [t for t, _ in ordered]
        if self.max_tokens is not None:
            tokens = tokens[: max(0, self.max_tokens - self._special_count())]
        self.set_vocabulary(tokens)

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        """Every index's token: mask (``int`` mode only), OOV tokens, then the vocabulary."""

        def shown(t):
            return t.decode("utf-8") if isinstance(t, bytes) else t

        vocab = [shown(t) for t in self._vocab]
        if not include_special_tokens:
            return vocab
        head = []
        if self.mask_token is not None and self.output_mode == "int":
            head.append(self.mask_token)
        head += [self.oov_token] * self.num_oov_indices
        return head + vocab

    def vocabulary_size(self) -> int:
        """The number of indices, special tokens included."""
        return self._special_count() + len(self._vocab)

    # --- lookups -------------------------------------------------------------------------
    def _oov_slot(self, key) -> int:
        if self.num_oov_indices == 1:
            return 0
        if self._STRINGS:
            return fingerprint64(key) % self.num_oov_indices
        return key % self.num_oov_indices

    def _lookup(self, key) -> int:
        if self.mask_token is not None and key == self._key(self.mask_token):
            return 0
        index = self._index.get(key)
        if index is not None:
            return index
        if self.num_oov_indices == 0:
            raise errors.InvalidArgumentError(
                f"{self.name}: token {key!r} is not in the vocabulary and num_oov_indices=0."
            )
        return (self.mask_token is not None) + self._oov_slot(key)

    def _convert_inputs(self, inputs):
        return inputs

    def call(self, inputs) -> Tensor:
        if is_ragged(inputs):
            return ragged_call(self, inputs, self.invert or self.output_mode == "int")
        values = as_array(inputs)
        if self.invert:
            return self._invert(values)
        indices = self._indices(values)
        if self.output_mode == "int":
            return convert_to_tensor(indices)
        return self._encode_indices(indices)

    def _indices(self, values: np.ndarray) -> np.ndarray:
        flat = [self._lookup(self._key(t)) for t in values.reshape(-1)]
        return np.asarray(flat, dtype=np.int64).reshape(values.shape)

    def _encode_indices(self, indices: np.ndarray) -> Tensor:
        """The encoding of ``indices`` (-1: a padded place of a ragged row, adds nothing)."""
        depth = self.vocabulary_size()
        if self.mask_token is not None:  # the mask has no column: indices move down one
            depth -= 1
            indices = np.where(indices <= 0, -1, indices - 1)
        return encode(indices, depth, self.output_mode, name=self.name)

    def _invert(self, values: np.ndarray) -> Tensor:
        table = self.get_vocabulary()
        flat = []
        for index in np.asarray(values, dtype=np.int64).reshape(-1):
            if 0 <= index < len(table) and not (
                self.mask_token is None and index < self.num_oov_indices
            ):
                flat.append(self._key(table[index]))
            else:
                flat.append(self._key(self.oov_token))
        if self._STRINGS:
            return convert_to_tensor(np.asarray(flat, dtype=object).reshape(values.shape))
        return convert_to_tensor(np.asarray(flat, dtype=np.int64).reshape(values.shape))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "mask_token": self.mask_token,
            "oov_token": self.oov_token,
            "vocabulary": self.get_vocabulary(include_special_tokens=False),
            "invert": self.invert,
            "output_mode": self.output_mode,
        }


class StringLookup(_IndexLookup):
    """Strings to indices (``oov_token='[UNK]'``, no mask by default)."""

    _STRINGS = True

    def __init__(
        self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", **kwargs
    ) -> None:
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, **kwargs)


class IntegerLookup(_IndexLookup):
    """Integers to indices (``oov_token=-1``, no mask by default)."""

    _STRINGS = False

    def __init__(
        self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, **kwargs
    ) -> None:
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, **kwargs)
