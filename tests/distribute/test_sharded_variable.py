"""ShardedVariable and the partitioners: TF's shard-count rules, one-variable behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import errors
from simdist.distribute.partitioners import (
    FixedShardsPartitioner,
    MaxSizePartitioner,
    MinSizePartitioner,
    shard_offsets,
)
from simdist.distribute.sharded_variable import ShardedVariable, embedding_lookup

shapes = st.lists(st.integers(1, 40), min_size=1, max_size=3).map(tf.TensorShape)


# --- partitioners: TF's documented examples and rules ----------------------------------------
def test_tf_docstring_examples():
    s = tf.TensorShape([6, 1])
    assert FixedShardsPartitioner(2)(tf.TensorShape([10, 3]), tf.float32) == [2, 1]
    assert MinSizePartitioner(min_shard_bytes=4, max_shards=2)(s, tf.float32) == [2, 1]
    assert MinSizePartitioner(min_shard_bytes=4, max_shards=10)(s, tf.float32) == [6, 1]
    assert MaxSizePartitioner(max_shard_bytes=4)(s, tf.float32) == [6, 1]
    assert MaxSizePartitioner(max_shard_bytes=4, max_shards=2)(s, tf.float32) == [2, 1]
    assert MaxSizePartitioner(max_shard_bytes=1024)(s, tf.float32) == [1, 1]


@given(shapes, st.integers(1, 10))
def test_fixed_shards_rule(shape, n):
    assert FixedShardsPartitioner(n)(shape, tf.float32) == [min(n, shape[0])] + [1] * (
        shape.rank - 1
    )


@given(shapes, st.integers(1, 2000), st.integers(1, 10))
def test_min_size_rule(shape, min_bytes, max_shards):
    counts = MinSizePartitioner(min_bytes, max_shards)(shape, tf.float64)
    wanted = math.ceil(shape.num_elements() * 8 / min_bytes)
    assert counts[0] == max(1, min(shape[0], max_shards, wanted))
    assert counts[1:] == [1] * (shape.rank - 1)


@given(shapes, st.integers(1, 2000), st.one_of(st.none(), st.integers(1, 10)))
def test_max_size_rule_keeps_shards_small(shape, max_bytes, max_shards):
    n = MaxSizePartitioner(max_bytes, max_shards)(shape, tf.float32)[0]
    row_bytes = shape.num_elements() // shape[0] * 4
    rows_per_shard = max(1, max_bytes // row_bytes)
    assert n == min(max_shards or 10**9, math.ceil(shape[0] / rows_per_shard))
    if max_shards is None and row_bytes <= max_bytes:  # then every shard fits
        assert math.ceil(shape[0] / n) * row_bytes <= max_bytes


def test_string_elements_use_bytes_per_string():
    assert MinSizePartitioner(10, 8, bytes_per_string=5)(tf.TensorShape([8]), tf.string) == [4]


@pytest.mark.parametrize(
    "make",
    [
        lambda: MinSizePartitioner(min_shard_bytes=0),
        lambda: MinSizePartitioner(max_shards=0),
        lambda: MaxSizePartitioner(max_shard_bytes=0),
        lambda: MaxSizePartitioner(4, max_shards=-1),
        lambda: MaxSizePartitioner(4, bytes_per_string=0),
    ],
)
def test_bad_partitioner_arguments(make):
    with pytest.raises(ValueError, match="must be positive"):
        make()


@given(st.integers(1, 200), st.integers(1, 20))
def test_shard_offsets_div_rule(length, n):
    offsets = shard_offsets(length, n)
    sizes = np.diff(offsets)
    assert offsets[0] == 0 and offsets[-1] == length and len(sizes) == n
    assert sizes.max() - sizes.min() <= 1 and list(sizes) == sorted(sizes, reverse=True)


def test_tf_example_13_ids_over_5_shards():
    assert shard_offsets(13, 5) == [0, 3, 6, 9, 11, 13]


# --- ShardedVariable ---------------------------------------------------------------------------
def _sv():
    return ShardedVariable(
        [tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="s0"), tf.Variable([[5.0, 6.0]], name="s1")],
        name="table",
    )


def test_reads_as_one_variable():
    v = _sv()
    assert v.shape == tf.TensorShape([3, 2]) and v.dtype == tf.float32 and v.name == "table"
    np.testing.assert_array_equal(v.numpy(), [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal((v + 1).numpy(), [[2, 3], [4, 5], [6, 7]])
    np.testing.assert_array_equal(v[1:3].numpy(), [[3, 4], [5, 6]])
    assert [s.name for s in v] == ["s0:0", "s1:0"]  # iterating gives the shards, as TF
    assert isinstance(v, tf.Variable)


def test_assign_family_splits_by_rows():
    v = _sv()
    v.assign_add(np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(v.variables[1].numpy(), [[6, 7]])
    v.assign_sub(np.ones((3, 2), np.float32))
    v.assign(np.arange(6, dtype=np.float32).reshape(3, 2))
    np.testing.assert_array_equal(v.variables[0].numpy(), [[0, 1], [2, 3]])
    with pytest.raises(errors.InvalidArgumentError, match="full shape"):
        v.assign([[1.0, 1.0]])


def test_bad_shards():
    with pytest.raises(TypeError, match="non-empty list"):
        ShardedVariable([])
    with pytest.raises(ValueError, match="same dtype"):
        ShardedVariable([tf.Variable([1.0]), tf.Variable([1], dtype=tf.int32)])
    with pytest.raises(ValueError, match="same shapes"):
        ShardedVariable([tf.Variable([[1.0]]), tf.Variable([[1.0, 2.0]])])


def test_gradients_reach_shards_and_the_whole():
    v = _sv()
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(v * v)
    g_shards = tape.gradient(y, v.variables)
    g_whole = tape.gradient(y, v)
    np.testing.assert_array_equal(g_shards[0].numpy(), [[2, 4], [6, 8]])
    np.testing.assert_array_equal(g_shards[1].numpy(), [[10, 12]])
    np.testing.assert_array_equal(g_whole.numpy(), 2 * v.numpy())


def test_embedding_lookup_reads_the_right_shards():
    v = _sv()
    with tf.GradientTape() as tape:
        rows = embedding_lookup(v, [2, 0, 2])
        y = tf.reduce_sum(rows)
    np.testing.assert_array_equal(rows.numpy(), [[5, 6], [1, 2], [5, 6]])
    g = tape.gradient(y, v.variables)
    np.testing.assert_array_equal(g[0].numpy(), [[1, 1], [0, 0]])
    np.testing.assert_array_equal(g[1].numpy(), [[2, 2]])
    with pytest.raises(errors.InvalidArgumentError, match="not in"):
        embedding_lookup(v, [3])


def test_checkpoint_saves_one_variable_and_reshards_on_restore(tmp_path):
    full = np.arange(12, dtype=np.float32).reshape(6, 2)
    sharded = ShardedVariable([tf.Variable(full[:4]), tf.Variable(full[4:])], name="emb")
    path = tf.train.Checkpoint(emb=sharded).save(str(tmp_path / "ckpt"))
    plain = tf.Variable(np.zeros((6, 2), np.float32))
    tf.train.Checkpoint(emb=plain).restore(path)
    np.testing.assert_array_equal(plain.numpy(), full)
    three = ShardedVariable([tf.Variable(np.zeros((2, 2), np.float32)) for _ in range(3)])
    tf.train.Checkpoint(emb=three).restore(path)
    np.testing.assert_array_equal(three.variables[2].numpy(), full[4:])
