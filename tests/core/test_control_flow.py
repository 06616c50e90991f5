"""cond and while_loop: eager semantics, gradients through the taken path, graph-like checks."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from tests.gradcheck import check_gradients


@given(pred=st.booleans())
def test_cond_calls_only_the_branch_the_predicate_picks(pred):
    called = []
    out = tf.cond(
        tf.constant(pred), lambda: called.append("t") or 1, lambda: called.append("f") or 2
    )
    assert out == (1 if pred else 2) and called == (["t"] if pred else ["f"])


def test_cond_keeps_singletons_and_checks_its_arguments():
    assert tf.cond(True, lambda: [5], lambda: [6]) == [5]  # TF 2's cond is strict
    assert tf.cond(0, lambda: 1, lambda: (2, 3)) == (2, 3)
    with pytest.raises(ValueError, match="truth value"):
        tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)
    with pytest.raises(TypeError, match="'true_fn' argument required"):
        tf.cond(True, None, lambda: 2)
    with pytest.raises(TypeError, match="'true_fn' must be callable"):
        tf.cond(True, 1, lambda: 2)


def test_gradients_flow_through_the_taken_branch():
    check_gradients(lambda x: tf.cond(tf.reduce_sum(x) > 0, lambda: x * x, lambda: -x),
                    np.array([1.0, 2.0]))
    check_gradients(lambda x: tf.cond(tf.reduce_sum(x) > 0, lambda: x * x, lambda: -x * 3.0),
                    np.array([-1.0, -2.0]))


@given(n=st.integers(0, 6), limit=st.one_of(st.none(), st.integers(0, 8)))
def test_while_loop_counts_like_a_python_loop(n, limit):
    i, total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (0, 0),
                             maximum_iterations=limit)
    steps = n if limit is None else min(n, limit)
    assert int(i) == steps and int(total) == sum(range(steps))
    assert i.dtype == tf.int32


def test_while_loop_structure_and_gradient():
    out = tf.while_loop(lambda i: i < 3, lambda i: [i + 1], [tf.constant(0)])
    assert isinstance(out, list) and int(out[0]) == 3
    nested = tf.while_loop(lambda s: s["n"] < 2, lambda s: ({"n": s["n"] + 1, "x": s["x"] * 2},),
                           ({"n": 0, "x": 1.0},))
    assert float(nested[0]["x"]) == 4.0
    # x ** 8 after three squarings: gradient through every iteration
    check_gradients(
        lambda x: tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * y), (0, x))[1],
        np.array([1.1, 0.9]),
    )


def test_while_loop_errors_as_tf():
    with pytest.raises(TypeError, match="'cond' must be callable"):
        tf.while_loop(1, lambda i: [i], [0])
    with pytest.raises(TypeError, match="'body' must be callable"):
        tf.while_loop(lambda i: i < 1, 1, [0])
    with pytest.raises(ValueError, match="'loop_vars' must be provided"):
        tf.while_loop(lambda: True, lambda: [], [])
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.while_loop(lambda i: i < 3, lambda i: (i + 1, i), [0])
    with pytest.raises(TypeError, match="must return a list or tuple"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    with pytest.raises(ValueError, match="truth value"):
        tf.while_loop(lambda i: tf.constant([True, True]), lambda i: [i + 1], [0])


def test_inside_function_the_graphs_invariants_are_checked():
    grow = tf.function(lambda: tf.while_loop(
        lambda x: tf.size(x) < 3, lambda x: [tf.concat([x, [1]], 0)], [tf.constant([1])]))
    with pytest.raises(ValueError, match="shape_invariants"):
        grow()
    eager = tf.while_loop(lambda x: tf.size(x) < 3, lambda x: [tf.concat([x, [1]], 0)],
                          [tf.constant([1])])
    assert eager[0].shape == [3]  # eagerly TF does not check shapes either
    relaxed = tf.function(lambda: tf.while_loop(
        lambda x: tf.size(x) < 3, lambda x: [tf.concat([x, [1]], 0)], [tf.constant([1])],
        shape_invariants=[tf.TensorShape([None])]))
    assert relaxed()[0].shape == [3]
    recast = tf.function(lambda: tf.while_loop(
        lambda x: x < 3, lambda x: [tf.cast(x, tf.float32) + 1], [tf.constant(0)]))
    with pytest.raises(TypeError, match="keep its dtype"):
        recast()


def test_control_dependencies_runs_eagerly_as_in_tf():
    called = []
    with tf.control_dependencies([tf.debugging.assert_equal(1, 1), lambda: called.append(1)]):
        out = tf.constant(2) + 1
    assert int(out) == 3 and called == [1]
    with tf.control_dependencies(None):
        pass
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad shape"):
        with tf.control_dependencies([tf.assert_equal(2, 3, message="bad shape")]):
            pass
