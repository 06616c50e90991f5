"""``Hashing``: strings (or integers, as their decimal text) to ``num_bins`` bins, as TF.

Without ``salt`` a value goes to ``Fingerprint64(bytes) % num_bins`` (FarmHash, TF's
``to_hash_bucket_fast``); with ``salt`` (an int ``s`` meaning ``[s, s]``, or a pair) to
``SipHash-2-4(salt, bytes) % num_bins`` (TF's ``to_hash_bucket_strong``). With
``mask_value``, that value goes to bin 0 and the others to ``1 + hash % (num_bins - 1)``.
Both hashes are checked against TF for many strings in the tests.
"""

from __future__ import annotations

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.core.ragged.ragged_tensor import is_ragged
from simdist.core.strings.farmhash import fingerprint64
from simdist.core.strings.siphash import siphash24
from simdist.core.tensor import Tensor
from simdist.keras.engine.base_layer import Layer
from simdist.keras.layers._checks import positive_int
from simdist.keras.layers.preprocessing._encoding import encode
from simdist.keras.layers.preprocessing._inputs import as_array, as_bytes, ragged_call

__all__ = ["Hashing"]


class Hashing(Layer):
    """Hash each value to a bin in ``[0, num_bins)`` (int64), or encode the bins.

    Raises:
        ValueError: a bad ``num_bins``, ``salt`` or ``output_mode``; at call, float inputs.
    """

    def __init__(
        self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs
    ) -> None:
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else "float32")
        super().__init__(**kwargs)
        if sparse:
            raise NotImplementedError("Hashing(sparse=True) is not yet in simdist.")
        self.num_bins = positive_int(num_bins, "num_bins")
        if mask_value is not None and self.num_bins < 2:
            raise ValueError("With a `mask_value`, `num_bins` must be at least 2.")
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(
                "`output_mode` must be one of 'int', 'one_hot', 'multi_hot', 'count'. "
                f"Received: output_mode={output_mode!r}"
            )
        if salt is not None:
            pair = [salt, salt] if isinstance(salt, int) else list(salt)
            if len(pair) != 2 or not all(isinstance(s, int) for s in pair):
                raise ValueError(f"`salt` must be an int or a pair of ints, got {salt!r}.")
            salt = pair
        self.mask_value = mask_value
        self.salt = salt
        self.output_mode = output_mode

    def _convert_inputs(self, inputs):
        return inputs

    def _hash(self, data: bytes, bins: int) -> int:
        if self.salt is None:
            return fingerprint64(data) % bins
        k0, k1 = (s & ((1 << 64) - 1) for s in self.salt)
        return siphash24(k0, k1, data) % bins

    def call(self, inputs) -> Tensor:
        if is_ragged(inputs):
            return ragged_call(self, inputs, self.output_mode == "int")
        indices = self._indices(as_array(inputs))
        if self.output_mode == "int":
            return convert_to_tensor(indices)
        return self._encode_indices(indices)

    def _indices(self, values: np.ndarray) -> np.ndarray:
        if values.dtype.kind == "f":
            raise ValueError(
                f"Hashing layer '{self.name}' hashes strings or integers, got floating inputs."
            )
        masked = None
        if self.mask_value is not None:
            masked = self._key(self.mask_value)
        bins = self.num_bins - (self.mask_value is not None)
        flat = []
        for value in values.reshape(-1):
            key = self._key(value)
            if masked is not None and key == masked:
                flat.append(0)
            else:
                flat.append(self._hash(key, bins) + (masked is not None))
        return np.asarray(flat, dtype=np.int64).reshape(values.shape)

    def _encode_indices(self, indices: np.ndarray) -> Tensor:
        return encode(indices, self.num_bins, self.output_mode, name=self.name)

    @staticmethod
    def _key(value) -> bytes:
        if isinstance(value, (int, np.integer)):
            return str(int(value)).encode("ascii")
        return as_bytes(value)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "num_bins": self.num_bins,
            "mask_value": self.mask_value,
            "salt": self.salt,
            "output_mode": self.output_mode,
        }
