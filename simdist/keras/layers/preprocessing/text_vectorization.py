"""``TextVectorization``: strings to token indices or token counts, as Keras 2 (tf_keras).

The pipeline is Keras 2's: ``standardize`` (``"lower_and_strip_punctuation"``: ASCII
``tf.strings.lower`` then punctuation removed by Keras's regex; ``"lower"``,
``"strip_punctuation"``, None or a callable), ``split`` (``"whitespace"``: ``tf.strings.split``;
``"character"``: ``tf.strings.unicode_split``; None or a callable; a ``[batch, 1]`` input is
squeezed first), ``ngrams`` (an int n: widths 1..n; a tuple: those widths), then a vocabulary
lookup whose index 0 is the mask token ``""`` and 1 the OOV token ``"[UNK]"``.

``output_mode="int"`` gives int64 indices padded with 0 to the longest row, or cut or padded
to ``output_sequence_length`` (``ragged=True``: a RaggedTensor). ``"multi_hot"``, ``"count"``
and ``"tf_idf"`` give float32 ``[batch, vocabulary_size]`` (column 0 counts OOV tokens; the
mask has no column); ``tf_idf`` multiplies each count by ``log(1 + documents / (1 +
document frequency))``, OOV by the mean of the vocabulary's weights, as Keras 2's ``adapt``.
``adapt`` orders the vocabulary by descending count, ties by descending token.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from simdist.core import dtypes
from simdist.core.convert import convert_to_tensor
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.strings import lower, ngrams, regex_replace, split, unicode_split
from simdist.core.tensor import Tensor, make_tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers.preprocessing._inputs import adapt_batches, as_array

__all__ = ["TextVectorization"]

DEFAULT_STRIP_REGEX = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")
_MODES = ("int", "multi_hot", "count", "tf_idf")
_MASK, _OOV = b"", b"[UNK]"


def _check_choice(value, allowed, arg: str) -> None:
    if value is None or callable(value) or value in allowed:
        return
    raise ValueError(
        f"Unknown value for `{arg}` argument of layer TextVectorization. If restoring a model, "
        f"this layer was created with a different value. Allowed values are: {allowed}. "
        f"Received: {value}"
    )


class TextVectorization(Layer):
    """Map text to integer sequences or to token counts (see the module docstring).

    >>> import simdist as tf
    >>> layer = tf.keras.layers.TextVectorization(output_sequence_length=4)
    >>> layer.adapt(["the cat sat", "the dog"])
    >>> layer.get_vocabulary()
    ['', '[UNK]', 'the', 'sat', 'dog', 'cat']
    >>> layer(["The cat ran!"]).numpy().tolist()
    [[2, 5, 1, 0]]

    Raises:
        ValueError: a bad argument (Keras 2's messages); a ``[batch, k]`` input with k > 1
            when splitting.
    """

    def __init__(
        self,
        max_tokens=None,
        standardize="lower_and_strip_punctuation",
        split="whitespace",
        ngrams=None,
        output_mode="int",
        output_sequence_length=None,
        pad_to_max_tokens=False,
        vocabulary=None,
        idf_weights=None,
        sparse=False,
        ragged=False,
        encoding="utf-8",
        **kwargs,
    ) -> None:
        if "dtype" in kwargs and kwargs["dtype"] not in (dtypes.string, "string"):
            raise ValueError(
                "`TextVectorization` may only have a dtype of string. "
                f"Received dtype: {kwargs['dtype']}."
            )
        kwargs["dtype"] = "string"
        kwargs.pop("has_input_vocabulary", None)
        kwargs.pop("vocabulary_size", None)
        super().__init__(**kwargs)
        _check_choice(standardize, _STANDARDIZE, "standardize")
        _check_choice(split, _SPLIT, "split")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode is not None and output_mode not in _MODES:
            _check_choice(output_mode, _MODES, "output_mode")
        if not (
            ngrams is None
            or isinstance(ngrams, int)
            or (isinstance(ngrams, tuple) and all(isinstance(n, int) for n in ngrams))
        ):
            raise ValueError(
                "`ngrams` must be None, an integer, or a tuple of integers. Received: "
                f"ngrams={ngrams}"
            )
        if not (output_sequence_length is None or isinstance(output_sequence_length, int)):
            raise ValueError(
                "`output_sequence_length` must be either None or an integer when "
                f"`output_mode` is 'int'. Received: output_sequence_length={output_sequence_length}"
            )
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(
                "`output_sequence_length` must not be set if `output_mode` is not 'int'. "
                f"Received output_sequence_length={output_sequence_length}."
            )
        if ragged and output_mode != "int":
            raise ValueError(
                "`ragged` must not be true if `output_mode` is `'int'`. Received: "
                f"ragged={ragged} and output_mode={output_mode}"
            )
        if ragged and output_sequence_length is not None:
            raise ValueError(
                "`output_sequence_length` must not be set if ragged is True. Received: "
                f"ragged={ragged} and output_sequence_length={output_sequence_length}"
            )
        if sparse:
            raise NotImplementedError("TextVectorization(sparse=True) is not in simdist.")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: {max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`.")
        self._max_tokens = max_tokens
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._output_mode = output_mode
        self._output_sequence_length = output_sequence_length
        self._pad_to_max_tokens = bool(pad_to_max_tokens)
        self._ragged = bool(ragged)
        self._encoding = encoding
        self._vocab: list[bytes] = []
        self._index: dict[bytes, int] = {}
        self._idf: np.ndarray | None = None
        self._has_input_vocabulary = vocabulary is not None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        elif idf_weights is not None:
            raise ValueError("`idf_weights` must be passed with a `vocabulary`.")

    # --- the vocabulary ------------------------------------------------------------------
    def _token_start(self) -> int:
        return 2 if self._output_mode in ("int", None) else 1  # mask (int only), OOV

    def set_vocabulary(self, vocabulary, idf_weights=None) -> None:
        """Use ``vocabulary`` (tokens, optionally led by ``""`` and ``"[UNK]"``); with
        ``tf_idf``, ``idf_weights`` (one per token).

        Raises:
            ValueError: repeated tokens; idf weights missing for ``tf_idf`` or given for
                another mode, or of another length than the vocabulary.
        """
        tokens = [
            t if isinstance(t, bytes) else str(t).encode("utf-8")
            for t in np.asarray(as_array(vocabulary)).reshape(-1).tolist()
        ]
        found_special = tokens[:2] == [_MASK, _OOV] or tokens[:1] == [_OOV]
        if tokens[:2] == [_MASK, _OOV]:
            tokens = tokens[2:]
        elif tokens[:1] == [_OOV]:
            tokens = tokens[1:]
        if len(set(tokens)) != len(tokens):
            repeated = sorted({t.decode() for t in tokens if tokens.count(t) > 1})
            raise ValueError(f"The passed vocabulary has at least one repeated term: {repeated}")
        if self._output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is TF_IDF")
            weights = np.asarray(getattr(idf_weights, "_value", idf_weights), np.float32)
            weights = weights.reshape(-1)
            if found_special:
                weights = weights[len(weights) - len(tokens) :]
            if len(weights) != len(tokens):
                raise ValueError(
                    "`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                    f"{len(weights)}, len(vocabulary) is {len(tokens)}"
                )
            self._idf = np.concatenate([[np.mean(weights, dtype=np.float32)], weights])
        elif idf_weights is not None:
            raise ValueError(
                "`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                f"output_mode={self._output_mode} and idf_weights={idf_weights}"
            )
        self._vocab = tokens
        self._index = {t: 2 + i for i, t in enumerate(tokens)}

    def get_vocabulary(self, include_special_tokens: bool = True) -> list[str]:
        """The index's tokens: ``""`` (int mode) and ``"[UNK]"``, then the vocabulary."""
        vocab = [t.decode("utf-8", "replace") for t in self._vocab]
        if not include_special_tokens:
            return vocab
        head = ["", "[UNK]"] if self._output_mode in ("int", None) else ["[UNK]"]
        return head + vocab

    def vocabulary_size(self) -> int:
        """The number of indices (special tokens included)."""
        return self._token_start() + len(self._vocab)

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Learn the vocabulary (and, for ``tf_idf``, the document frequencies) of ``data``.

        Raises:
            ValueError: the layer was given a vocabulary.
        """
        if self._has_input_vocabulary:
            raise ValueError(
                "Cannot adapt TextVectorization layer after setting a static vocabulary via "
                "init argument or `set_vocabulary`."
            )
        counts: Counter = Counter()
        document_counts: Counter = Counter()
        documents = 0
        for batch in adapt_batches(data, batch_size, steps):
            for row in self._rows(self._preprocess(batch)):
                counts.update(row)
                document_counts.update(set(row))
                documents += 1
        for special in (_MASK, _OOV):
            counts.pop(special, None)
        ordered = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
        tokens = [t for t, _ in ordered]
        if self._max_tokens is not None:
            tokens = tokens[: max(0, self._max_tokens - self._token_start())]
        self._vocab = tokens
        self._index = {t: 2 + i for i, t in enumerate(tokens)}
        if self._output_mode == "tf_idf":
            frequency = np.asarray([document_counts[t] for t in tokens], np.float64)
            weights = np.log(1 + documents / (1 + frequency)).astype(np.float32)
            mean = np.mean(weights, dtype=np.float32) if weights.size else np.float32(np.nan)
            self._idf = np.concatenate([[mean], weights]).astype(np.float32)

    # --- the pipeline --------------------------------------------------------------------
    def _convert_inputs(self, inputs):
        return inputs

    def _preprocess(self, inputs):
        if not (isinstance(inputs, Tensor) or is_ragged(inputs)):
            inputs = convert_to_tensor(as_array(inputs), dtype=dtypes.string)
        if self._standardize in ("lower", "lower_and_strip_punctuation"):
            inputs = lower(inputs)
        if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            inputs = regex_replace(inputs, DEFAULT_STRIP_REGEX, "")
        if callable(self._standardize):
            inputs = self._standardize(inputs)
        if self._split is not None:
            if not is_ragged(inputs) and inputs.ndim > 1:
                if inputs.shape[-1] != 1:
                    raise ValueError(
                        "When using `TextVectorization` to tokenize strings, the input rank "
                        "must be 1 or the last shape dimension must be 1. Received: "
                        f"inputs.shape={inputs.shape} with rank={inputs.ndim}"
                    )
                inputs = make_tensor(inputs._value[..., 0], dtypes.string)
            if self._split == "whitespace":
                inputs = split(inputs)
            elif self._split == "character":
                inputs = unicode_split(inputs, "UTF-8")
            else:
                inputs = self._split(inputs)
        if self._ngrams is not None:
            inputs = ngrams(inputs, self._ngrams, separator=" ")
        return inputs

    @staticmethod
    def _rows(tokens) -> list[list[bytes]]:
        """The documents of a token tensor: a ragged tensor's rows, a matrix's rows, or one
        document for a vector (Keras 2's rule)."""
        if is_ragged(tokens):
            if is_ragged(tokens.values):
                return [t for part in tokens for t in TextVectorization._rows(part)]
            values = tokens.values._value.tolist()
            s = tokens.row_splits._value.tolist()
            return [values[s[i] : s[i + 1]] for i in range(len(s) - 1)]
        array = tokens._value
        if array.ndim == 0:
            return [[array[()]]]
        if array.ndim == 1:
            return [array.tolist()]
        return [list(r) for r in array.reshape(-1, array.shape[-1]).tolist()]

    def _lookup(self, token: bytes) -> int:
        return 0 if token == _MASK else self._index.get(token, 1)

    def call(self, inputs):
        tokens = self._preprocess(inputs)
        if self._output_mode is None:
            return tokens
        if self._output_mode == "int":
            return self._indices(tokens)
        return self._encode(tokens)

    def _indices(self, tokens):
        flat = tokens.flat_values if is_ragged(tokens) else tokens
        array = flat._value
        ids = np.asarray([self._lookup(t) for t in array.ravel().tolist()], np.int64)
        ids = make_tensor(ids.reshape(array.shape), dtypes.int64)
        if is_ragged(tokens):
            ragged = tokens.with_flat_values(ids)
            if self._ragged:
                return ragged
            shape = ragged.shape.as_list()
            shape[-1] = self._output_sequence_length
            return ragged.to_tensor(default_value=0, shape=shape)
        if self._output_sequence_length is None:
            return ids
        length = self._output_sequence_length
        cut = ids._value[..., :length]
        pad = [(0, 0)] * (cut.ndim - 1) + [(0, length - cut.shape[-1])]
        return make_tensor(np.pad(cut, pad), dtypes.int64)

    def _encode(self, tokens) -> Tensor:
        rows = self._rows(tokens)
        depth = self.vocabulary_size()
        if self._pad_to_max_tokens:
            depth = max(depth, self._max_tokens)
        out = np.zeros((len(rows), depth), np.float32)
        for r, row in enumerate(rows):
            for token in row:
                index = self._lookup(token)
                if index == 0:
                    continue
                if self._output_mode == "multi_hot":
                    out[r, index - 1] = 1.0
                else:
                    out[r, index - 1] += 1.0
        if self._output_mode == "tf_idf":
            weights = np.zeros(depth, np.float32)
            weights[: len(self._idf)] = self._idf
            out = out * weights
        vector_input = not is_ragged(tokens) and tokens.ndim <= 1
        return make_tensor(out[0] if vector_input else out, dtypes.float32)

    def compute_output_shape(self, input_shape):
        if self._output_mode == "int":
            return (input_shape[0], self._output_sequence_length)
        depth = self._max_tokens if self._pad_to_max_tokens else self.vocabulary_size()
        return (input_shape[0], depth)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "max_tokens": self._max_tokens,
            "standardize": self._standardize,
            "split": self._split,
            "ngrams": self._ngrams_arg,
            "output_mode": self._output_mode,
            "output_sequence_length": self._output_sequence_length,
            "pad_to_max_tokens": self._pad_to_max_tokens,
            "sparse": False,
            "ragged": self._ragged,
            "vocabulary": self.get_vocabulary(include_special_tokens=False) or None,
            "idf_weights": None if self._idf is None else self._idf[1:].tolist(),
            "encoding": self._encoding,
        }
