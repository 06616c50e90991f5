"""The object graph: TF-style keys, independent of object ids and layer-name counters."""

import numpy as np
from ckpt_helpers import batch, make_cnn, train_steps
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist import train
from simdist.checkpoint import graph
from simdist.checkpoint.checkpoint import serialize


def _keys(root):
    values, _ = serialize(root)
    return list(values)


def test_sequential_and_adam_keys_follow_tf():
    model = make_cnn()
    optimizer = tf.keras.optimizers.Adam()
    train_steps(model, optimizer, steps=1)
    keys = _keys(train.Checkpoint(optimizer=optimizer, model=model))
    assert keys == [
        "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE",
        "optimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "model/layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE",
    ] + [
        f"model/layer_with_weights-{j}/{w}/.OPTIMIZER_SLOT/optimizer/{s}/.ATTRIBUTES/VARIABLE_VALUE"
        for j in (0, 1)
        for w in ("kernel", "bias")
        for s in ("m", "v")
    ]


def test_keys_do_not_depend_on_ids_or_layer_name_counters():
    first = make_cnn()
    first(batch()[0])
    for _ in range(3):
        tf.keras.layers.Dense(1)  # advances the 'dense_N' name counter
    second = make_cnn()
    second(batch()[0])
    assert first.layers[-1].name != second.layers[-1].name
    assert _keys(train.Checkpoint(model=first)) == _keys(train.Checkpoint(model=second))


def test_a_variable_reachable_twice_is_saved_once_under_its_first_path():
    shared = tf.Variable(1.0)
    values, nodes = serialize(train.Checkpoint(a=[shared], b=shared))
    assert list(values) == ["b/.ATTRIBUTES/VARIABLE_VALUE"]
    assert nodes[0]["children"] == {"a": 1, "b": 2}
    assert nodes[1]["children"] == {"0": 2}


def test_unbuilt_sequential_already_names_its_layers():
    model = make_cnn()
    names = list(graph.children_of(model))
    assert names[:4] == ["layer-0", "layer-1", "layer-2", "layer-3"]
    model(batch()[0])
    names = list(graph.children_of(model))
    assert names[:2] == ["layer_with_weights-0", "layer_with_weights-1"]


def test_slots_of_variables_outside_the_graph_are_not_saved():
    outside = tf.Variable([1.0])
    optimizer = tf.keras.optimizers.Adam()
    optimizer.apply_gradients([(tf.constant([0.5]), outside)])
    keys = _keys(train.Checkpoint(optimizer=optimizer))
    assert not any("OPTIMIZER_SLOT" in k for k in keys)


@given(st.text(max_size=12), st.text(max_size=12))
def test_escaping_is_injective_and_slash_free(a, b):
    ea, eb = graph.escape(a), graph.escape(b)
    assert "/" not in ea
    assert (ea == eb) == (a == b)
    assert not ea.startswith(".") or ea.startswith("..") or ea.startswith(".S")


def test_escaped_names_round_trip_through_a_checkpoint(tmp_path):
    v = tf.Variable(np.float32(3.0))
    path = train.Checkpoint(d={"a/b": v, ".ATTRIBUTES": tf.Variable(1)}).write(str(tmp_path / "e"))
    keys = [k for k, _ in train.list_variables(path)]
    assert "d/a.Sb/.ATTRIBUTES/VARIABLE_VALUE" in keys
    assert "d/..ATTRIBUTES/.ATTRIBUTES/VARIABLE_VALUE" in keys
    other = tf.Variable(np.float32(0.0))
    train.Checkpoint(d={"a/b": other, ".ATTRIBUTES": tf.Variable(0)}).restore(
        path
    ).assert_consumed()
    assert float(other.numpy()) == 3.0
