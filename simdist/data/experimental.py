"""``tf.data.experimental``: sharding policies, option groups, cardinality, and the
transformation functions for ``Dataset.apply`` that TF keeps here."""

from simdist.data.csv_dataset import CsvDataset as CsvDataset
from simdist.data.dataset import INFINITE as INFINITE_CARDINALITY
from simdist.data.dataset import UNKNOWN as UNKNOWN_CARDINALITY
from simdist.data.dataset import Dataset as _Dataset
from simdist.data.dataset import cardinality as cardinality
from simdist.data.iterator import Optional as Optional
from simdist.data.make_csv import make_csv_dataset as make_csv_dataset
from simdist.data.options import AUTOTUNE as AUTOTUNE
from simdist.data.options import AutoShardPolicy as AutoShardPolicy
from simdist.data.options import AutotuneOptions as AutotuneOptions
from simdist.data.options import DistributeOptions as DistributeOptions
from simdist.data.options import ExternalStatePolicy as ExternalStatePolicy
from simdist.data.options import OptimizationOptions as OptimizationOptions
from simdist.data.options import ThreadingOptions as ThreadingOptions
from simdist.data.transforms import SHARD_HINT as SHARD_HINT


def assert_cardinality(expected_cardinality):
    """For ``apply``: declare the cardinality; iterating checks it (FailedPreconditionError)."""
    from simdist.data import transforms

    return lambda dataset: transforms.AssertCardinalityDataset(dataset, expected_cardinality)


def Counter(start=0, step=1, dtype=None):
    """``start, start + step, ...`` forever (``tf.data.Dataset.counter``)."""
    from simdist.core import dtypes

    return _Dataset.counter(start, step, dtypes.int64 if dtype is None else dtype)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    """``tf.data.Dataset.sample_from_datasets``."""
    return _Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """``tf.data.Dataset.choose_from_datasets``."""
    return _Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def scan(initial_state, scan_func):
    """For ``apply``: ``Dataset.scan``."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate):
    """For ``apply``: ``Dataset.take_while``."""
    return lambda dataset: dataset.take_while(predicate)


def unique():
    """For ``apply``: ``Dataset.unique``."""
    return lambda dataset: dataset.unique()


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """For ``apply``: ``Dataset.group_by_window``."""
    return lambda dataset: dataset.group_by_window(
        key_func, reduce_func, window_size, window_size_func
    )


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):  # fmt: skip
    """For ``apply``: ``Dataset.bucket_by_sequence_length``."""
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder,
    )  # fmt: skip


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
    """``Dataset.ragged_batch`` as a function for ``apply`` (TF's older name)."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)


def get_single_element(dataset):
    """``Dataset.get_single_element``."""
    return dataset.get_single_element()


__all__ = [
    "Counter",
    "assert_cardinality",
    "bucket_by_sequence_length",
    "choose_from_datasets",
    "dense_to_ragged_batch",
    "get_single_element",
    "group_by_window",
    "sample_from_datasets",
    "scan",
    "take_while",
    "unique",
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "AutotuneOptions",
    "SHARD_HINT",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "Optional",
    "ThreadingOptions",
    "cardinality",
]
