"""tf.data.Options: typed attributes, AutoShardPolicy numbers, with_options and merging."""

import pytest

import simdist as tf
from simdist.data import Dataset, Options
from simdist.data.experimental import AutoShardPolicy, DistributeOptions


def test_auto_shard_policy_numbers_are_tfs():
    assert [
        int(p)
        for p in (
            AutoShardPolicy.OFF,
            AutoShardPolicy.AUTO,
            AutoShardPolicy.FILE,
            AutoShardPolicy.DATA,
            AutoShardPolicy.HINT,
        )
    ] == [-1, 0, 1, 2, 3]
    assert tf.data.experimental.AUTOTUNE == tf.data.AUTOTUNE == -1
    assert tf.data.experimental.INFINITE_CARDINALITY == -1
    assert tf.data.experimental.UNKNOWN_CARDINALITY == -2


def test_with_options_and_options():
    options = Options()
    options.experimental_distribute.auto_shard_policy = AutoShardPolicy.DATA
    ds = Dataset.range(4).with_options(options).batch(2)
    assert ds.options().experimental_distribute.auto_shard_policy == AutoShardPolicy.DATA
    assert Dataset.range(4).options().experimental_distribute.auto_shard_policy == (
        AutoShardPolicy.AUTO
    )
    # the dataset took a copy: later edits to `options` do not reach it
    options.experimental_distribute.auto_shard_policy = AutoShardPolicy.OFF
    assert ds.options().experimental_distribute.auto_shard_policy == AutoShardPolicy.DATA
    assert [v.tolist() for v in ds.as_numpy_iterator()] == [[0, 1], [2, 3]]


def test_later_options_win_and_unset_ones_keep_earlier_values():
    first, second = Options(), Options()
    first.deterministic = False
    first.experimental_distribute.auto_shard_policy = AutoShardPolicy.FILE
    second.experimental_distribute.auto_shard_policy = AutoShardPolicy.OFF
    merged = Dataset.range(3).with_options(first).with_options(second).options()
    assert merged.deterministic is False
    assert merged.experimental_distribute.auto_shard_policy == AutoShardPolicy.OFF
    zipped = Dataset.zip((Dataset.range(2).with_options(first), Dataset.range(2)))
    assert zipped.options().deterministic is False


def test_unknown_attributes_and_wrong_types_are_rejected():
    options = Options()
    with pytest.raises(AttributeError):
        options.no_such_option = 1
    with pytest.raises(AttributeError):
        options.experimental_distribute.auto_shard = AutoShardPolicy.OFF
    with pytest.raises(TypeError):
        options.experimental_distribute.auto_shard_policy = 2
    with pytest.raises(TypeError):
        options.deterministic = "yes"


def test_options_of_a_dataset_are_frozen():
    frozen = Dataset.range(2).options()
    with pytest.raises(ValueError, match="with_options"):
        frozen.deterministic = False
    with pytest.raises(ValueError):
        frozen.experimental_distribute.auto_shard_policy = AutoShardPolicy.OFF


def test_equality_and_aliases():
    a, b = Options(), Options()
    assert a == b
    a.experimental_deterministic = False
    assert a.deterministic is False and a != b
    d = DistributeOptions()
    d.num_devices = 2
    assert d.num_devices == 2
    with pytest.raises(TypeError):
        Dataset.range(2).with_options("not options")
