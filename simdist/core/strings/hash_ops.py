"""Hashing strings into buckets: ``to_hash_bucket_fast`` (FarmHash ``Fingerprint64``, TF's
and the ``Hashing`` layer's) and ``to_hash_bucket_strong`` (keyed SipHash-2-4)."""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.strings._text import elementwise, string_array
from simdist.core.strings.farmhash import fingerprint64
from simdist.core.strings.siphash import siphash24
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["to_hash_bucket_fast", "to_hash_bucket_strong"]


def _buckets(num_buckets) -> int:
    count = int(num_buckets)
    if count < 1:
        raise errors.InvalidArgumentError(
            f"num_buckets must be >= 1, got {count}; every string needs a bucket."
        )
    return count


@elementwise
def to_hash_bucket_fast(input, num_buckets, name=None) -> Tensor:
    """``Fingerprint64(s) % num_buckets`` for each string, as int64 (TF's buckets)."""
    count = _buckets(num_buckets)
    array = string_array(input, "StringToHashBucketFast")
    flat = [fingerprint64(b) % count for b in array.ravel().tolist()]
    return make_tensor(np.asarray(flat, np.int64).reshape(array.shape), dtypes.int64)


@elementwise
def to_hash_bucket_strong(input, num_buckets, key, name=None) -> Tensor:
    """``SipHash-2-4(key[0], key[1], s) % num_buckets`` for each string, as int64.

    Raises:
        InvalidArgumentError: ``key`` is not two integers.
    """
    count = _buckets(num_buckets)
    if len(key) != 2:
        raise errors.InvalidArgumentError(f"Key must have 2 elements, got {len(key)}.")
    k0, k1 = (int(k) for k in key)
    array = string_array(input, "StringToHashBucketStrong")
    flat = [siphash24(k0, k1, b) % count for b in array.ravel().tolist()]
    return make_tensor(np.asarray(flat, np.int64).reshape(array.shape), dtypes.int64)
