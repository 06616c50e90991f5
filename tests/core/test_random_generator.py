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


def test_the_state_reads_as_tfs():
    g = tf.random.Generator.from_seed(1234)
    assert g.state.numpy().tolist() == [1234, 0, 0]  # TF's docstring values
    g.normal(shape=(2, 3))
    assert g.state.numpy().tolist() == [2770, 0, 0]
    kids = g.split(2)
    assert g.state.numpy().tolist() == [2770 + 512, 0, 0]
    assert [k.state.numpy().tolist()[:2] for k in kids] == [[0, 0], [0, 0]]
    # the state is the stream: seed 1 after two values is where seed 513 starts (as in TF)
    one = tf.random.Generator.from_seed(1)
    one.normal([2])
    np.testing.assert_array_equal(one.normal([3]).numpy(),
                                  tf.random.Generator.from_seed(513).normal([3]).numpy())
    g.skip(10)
    assert g.state.numpy().tolist() == [2770 + 512 + 2560, 0, 0]
    wrap = tf.random.Generator.from_key_counter(key=5, counter=[-1, 0], alg="philox")
    wrap.normal([1])  # the 128-bit counter carries into its high word
    assert wrap.state.numpy().tolist() == [255, 1, 5]


def test_a_checkpoint_saves_and_restores_the_stream(tmp_path):
    g = tf.random.Generator.from_seed(3)
    g.normal([2])
    path = tf.train.Checkpoint(generator=g).save(str(tmp_path / "ckpt"))
    expected = g.normal([3]).numpy()
    other = tf.random.Generator.from_seed(99)
    tf.train.Checkpoint(generator=other).restore(path)
    np.testing.assert_array_equal(other.normal([3]).numpy(), expected)


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


def _values(strategy, per_replica):
    return [v.numpy() for v in strategy.experimental_local_results(per_replica)]


def test_under_a_strategy_each_replica_has_its_own_reproducible_stream():
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        g = tf.random.Generator.from_seed(1)
        twin = tf.random.Generator.from_seed(1)
    first = _values(strategy, strategy.run(lambda: g.normal([2])))
    assert len({v.tobytes() for v in first}) == strategy.num_replicas_in_sync
    for a, b in zip(first, _values(strategy, strategy.run(lambda: twin.normal([2]))), strict=True):
        np.testing.assert_array_equal(a, b)
    # a generator made inside strategy.run draws as one made in the scope (TF: the same)
    made_inside = _values(
        strategy, strategy.run(lambda: tf.random.Generator.from_seed(1).normal([2]))
    )
    for a, b in zip(first, made_inside, strict=True):
        np.testing.assert_array_equal(a, b)
    # every replica's state advanced past its 2 values; a cross-replica draw continues
    # replica 0's stream
    assert all(int(v[0]) == 1 + 512 for v in _values(strategy, strategy.run(lambda: twin.state)))
    plain = tf.random.Generator.from_seed(1)
    plain.normal([2])
    np.testing.assert_array_equal(g.normal([1]).numpy(), plain.normal([1]).numpy())
    second = _values(strategy, strategy.run(lambda: g.normal([2])))
    assert not any(np.array_equal(a, b) for a, b in zip(first, second, strict=True))


def test_a_generator_from_outside_the_strategy_is_refused_inside_run():
    strategy = tf.distribute.MirroredStrategy()
    g = tf.random.Generator.from_seed(1)
    with pytest.raises(NotImplementedError, match="strategy.scope"):
        strategy.run(lambda: g.normal([1]))
