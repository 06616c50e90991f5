"""tf.random.Generator: reproducible streams, state round trips, split independence, refusals."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf


@given(seed=st.integers(-(2**63), 2**63 - 1))
def test_same_seed_same_stream_and_state_round_trips(seed):
    a, b = tf.random.Generator.from_seed(seed), tf.random.Generator.from_seed(seed)
    first = a.normal([3])
    np.testing.assert_array_equal(first.numpy(), b.normal([3]).numpy())
    assert not np.array_equal(a.normal([3]).numpy(), first.numpy())  # the counter moved on
    resumed = tf.random.Generator.from_state(a.state, alg="philox")
    np.testing.assert_array_equal(resumed.uniform([4]).numpy(), a.uniform([4]).numpy())
    a.reset_from_seed(seed)
    np.testing.assert_array_equal(a.normal([3]).numpy(), first.numpy())


def test_draws_do_not_depend_on_the_global_seed():
    tf.random.set_seed(1)
    one = tf.random.Generator.from_seed(7).normal([2]).numpy()
    tf.random.set_seed(2)
    assert np.array_equal(tf.random.Generator.from_seed(7).normal([2]).numpy(), one)


def test_split_children_are_distinct_and_reproducible():
    parent = tf.random.Generator.from_seed(3)
    kids = parent.split(3)
    draws = [k.normal([4]).numpy() for k in kids]
    assert len({d.tobytes() for d in draws}) == 3
    again = [k.normal([4]).numpy() for k in tf.random.Generator.from_seed(3).split(3)]
    for d, e in zip(draws, again, strict=True):
        np.testing.assert_array_equal(d, e)
    assert tf.random.Generator.from_seed(3).split(0) == []


def test_distributions_and_dtypes():
    g = tf.random.Generator.from_seed(0)
    u = g.uniform([2000], minval=2.0, maxval=3.0, dtype=tf.float64)
    assert u.dtype == tf.float64 and 2.0 <= u.numpy().min() and u.numpy().max() < 3.0
    ints = g.uniform([500], maxval=10, dtype=tf.int32)
    assert ints.dtype == tf.int32 and set(ints.numpy().tolist()) == set(range(10))
    n = g.normal([4000], mean=1.0, stddev=2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15
    assert np.abs(g.truncated_normal([1000]).numpy()).max() <= 2.0
    assert g.make_seeds(3).shape == [2, 3]
    with pytest.raises(ValueError, match="both `None` or both non-`None`"):
        g.uniform([2], dtype=tf.int32)
    with pytest.raises(TypeError):
        g.normal([2], dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Philox"):
        tf.random.Generator.from_seed(1, alg="threefry")


def test_non_deterministic_state_is_deterministic_per_program_and_global_is_stable():
    a = tf.random.Generator.from_non_deterministic_state()
    b = tf.random.Generator.from_non_deterministic_state()
    assert not np.array_equal(a.state.numpy(), b.state.numpy())
    assert tf.random.get_global_generator() is tf.random.get_global_generator()
    mine = tf.random.Generator.from_seed(5)
    tf.random.set_global_generator(mine)
    assert tf.random.get_global_generator() is mine


def test_drawing_inside_strategy_run_is_refused_with_the_workaround():
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        g = tf.random.Generator.from_seed(1)
    assert g.normal([1]).shape == [1]  # cross-replica use works
    with pytest.raises(NotImplementedError, match="stateless"):
        strategy.run(lambda: g.normal([1]))
