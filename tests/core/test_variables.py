"""``Variable``: assignment rules, trainability, creator scopes, printing, reads on the tape."""

import numpy as np
import pytest

import simdist as tf


def test_repr_is_tfs():
    assert repr(tf.Variable([1.0, 2.0])) == (
        "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    )
    assert repr(tf.Variable(3, name="step")) == (
        "<tf.Variable 'step:0' shape=() dtype=int32, numpy=3>"
    )


def test_assign_family():
    v = tf.Variable([1.0, 2.0])
    assert v.assign([3.0, 4.0]) is v
    assert v.numpy().tolist() == [3.0, 4.0]
    v.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [4.0, 5.0]
    v.assign_sub(tf.constant([4.0, 5.0]))
    assert v.numpy().tolist() == [0.0, 0.0]
    assert v.assign([1.0, 1.0], read_value=False) is None


def test_reads_are_snapshots():
    v = tf.Variable([1.0, 2.0])
    before = v.value()
    v.assign([5.0, 6.0])
    v.assign_add([1.0, 1.0])
    assert before.numpy().tolist() == [1.0, 2.0]
    assert v.value().numpy().tolist() == [6.0, 7.0]
    arr = v.numpy()
    arr[0] = 100.0
    assert v.numpy()[0] == 6.0


def test_assign_shape_mismatch_raises_value_error():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        v.assign_add(1.0)


def test_assign_dtype_rules():
    v = tf.Variable([1.0, 2.0])
    v.assign([1, 2])  # Python ints convert to the variable's dtype
    assert v.dtype == tf.float32
    with pytest.raises(ValueError, match="int32"):
        v.assign(tf.constant([1, 2]))
    with pytest.raises(TypeError):
        tf.Variable([1, 2]).assign([1.5, 2.5])


def test_trainable_and_synchronization():
    assert tf.Variable(1.0).trainable
    on_read = tf.Variable(1.0, synchronization=tf.VariableSynchronization.ON_READ)
    assert not on_read.trainable
    with pytest.raises(ValueError, match="ON_READ"):
        tf.Variable(1.0, trainable=True, synchronization=tf.VariableSynchronization.ON_READ)
    v = tf.Variable(1.0, aggregation=tf.VariableAggregation.MEAN)
    assert v.aggregation is tf.VariableAggregation.MEAN
    assert v.synchronization is tf.VariableSynchronization.AUTO


def test_creator_scopes_run_innermost_first_and_see_all_arguments():
    calls = []

    def outer(next_creator, **kwargs):
        calls.append(("outer", kwargs["name"]))
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        calls.append(("inner", kwargs["name"]))
        assert kwargs["trainable"] is None
        assert kwargs["synchronization"] is tf.VariableSynchronization.AUTO
        kwargs["name"] = "renamed"
        return next_creator(**kwargs)

    with tf.variable_creator_scope(outer):
        with tf.variable_creator_scope(inner):
            v = tf.Variable(1.0, name="orig")
    assert calls == [("inner", "orig"), ("outer", "renamed")]
    assert v.name == "renamed:0"
    assert tf.Variable(1.0).name == "Variable:0"  # scopes are gone


def test_initial_value_forms():
    assert tf.Variable(lambda: tf.ones([2])).shape == (2,)
    assert tf.Variable(np.zeros(3)).dtype == tf.float64
    assert tf.Variable(1, dtype=tf.float32).dtype == tf.float32
    with pytest.raises(ValueError):
        tf.Variable(None)
    with pytest.raises(ValueError, match="not compatible"):
        tf.Variable([1.0, 2.0], shape=[3])


def test_constraint_applies_on_assign():
    v = tf.Variable([1.0, -1.0], constraint=lambda t: tf.maximum(t, 0.0))
    v.assign([-2.0, 3.0])
    assert v.numpy().tolist() == [0.0, 3.0]


def test_variables_in_ops_and_conversions():
    v = tf.Variable([[1.0, 2.0]])
    assert (v + 1.0).numpy().tolist() == [[2.0, 3.0]]
    assert (v[0, 1] == 2.0).numpy()
    assert len(v) == 1 and float(tf.Variable(2.5)) == 2.5
    assert np.asarray(v).tolist() == [[1.0, 2.0]]
    assert f"{tf.Variable(0.25)}" == "0.25"
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)
    assert {v.ref(): 1}[v.ref()] == 1
