"""``tf.strings``: string tensors (object arrays of bytes) split, joined, matched, hashed."""

from simdist.core.strings.hash_ops import to_hash_bucket_fast as to_hash_bucket_fast
from simdist.core.strings.hash_ops import to_hash_bucket_strong as to_hash_bucket_strong
from simdist.core.strings.split_ops import bytes_split as bytes_split
from simdist.core.strings.split_ops import ngrams as ngrams
from simdist.core.strings.split_ops import split as split
from simdist.core.strings.split_ops import unicode_decode as unicode_decode
from simdist.core.strings.split_ops import unicode_split as unicode_split
from simdist.core.strings.string_format import format as format
from simdist.core.strings.string_ops import as_string as as_string
from simdist.core.strings.string_ops import join as join
from simdist.core.strings.string_ops import length as length
from simdist.core.strings.string_ops import lower as lower
from simdist.core.strings.string_ops import reduce_join as reduce_join
from simdist.core.strings.string_ops import regex_full_match as regex_full_match
from simdist.core.strings.string_ops import regex_replace as regex_replace
from simdist.core.strings.string_ops import strip as strip
from simdist.core.strings.string_ops import substr as substr
from simdist.core.strings.string_ops import to_number as to_number
from simdist.core.strings.string_ops import upper as upper

__all__ = [
    "as_string", "bytes_split", "format", "join", "length", "lower", "ngrams", "reduce_join",
    "regex_full_match", "regex_replace", "split", "strip", "substr", "to_hash_bucket_fast",
    "to_hash_bucket_strong", "to_number", "unicode_decode", "unicode_split", "upper",
]  # fmt: skip
