"""layer_costs on a Functional graph: each call at its own input shape, merges priced."""

import pytest

import simdist as tf
from simdist.cost import layer_costs

BATCH = 2


def _residual():
    inputs = tf.keras.Input((4,))
    h = tf.keras.layers.Dense(4, name="first")(inputs)
    skip = tf.keras.layers.Dense(4, name="skip")(inputs)
    total = tf.keras.layers.Add(name="add")([h, skip])
    out = tf.keras.layers.Dense(3, name="head")(tf.keras.layers.ReLU(name="relu")(total))
    return tf.keras.Model(inputs, out)


def test_each_call_is_priced_at_the_shape_its_graph_gives_it():
    costs = {c.name: c for c in layer_costs(_residual(), (4,), BATCH)}
    assert list(costs) == ["first", "skip", "add", "relu", "head"]
    assert all(c.priced for c in costs.values())
    assert sum(c.param_count for c in costs.values()) == 2 * (4 * 4 + 4) + 4 * 3 + 3
    add = costs["add"]
    (forward,) = add.forward
    assert forward.flops == BATCH * 4  # k - 1 = 1 addition per output element
    assert forward.nbytes == 3 * BATCH * 4 * 4  # two inputs read, one output written
    assert add.backward == ()  # Add routes its gradient unchanged
    # the layers reading the input need no input gradient; the head does
    assert not any(op.name.endswith("input_grad") for op in costs["first"].backward)
    assert any(op.name.endswith("input_grad") for op in costs["head"].backward)


def test_a_layer_with_no_description_is_reported_not_zero():
    inputs = tf.keras.Input((4,))
    twice = tf.keras.layers.Lambda(lambda t: t * 2.0, name="twice")(inputs)  # Python: unknown
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, name="d")(twice))
    costs = layer_costs(model, (4,), BATCH, unpriced="report")
    assert [(c.name, c.priced) for c in costs] == [("twice", False), ("d", True)]
    with pytest.raises(NotImplementedError, match="'twice' of type Lambda"):
        layer_costs(model, (4,), BATCH)


def test_concatenate_is_priced_from_its_node_shapes():
    a, b = tf.keras.Input((4,)), tf.keras.Input((2,))
    joined = tf.keras.layers.Concatenate(name="cat")([a, b])
    model = tf.keras.Model([a, b], tf.keras.layers.Dense(2, name="d")(joined))
    costs = {c.name: c for c in layer_costs(model, (4,), BATCH)}
    assert costs["cat"].output_shape == (6,)
    (forward,) = costs["cat"].forward
    assert forward.flops == 0 and forward.nbytes == 2 * BATCH * 6 * 4  # read 6, write 6
    assert costs["cat"].backward == ()  # no input depends on weights: no gradient to slice


def test_an_input_shape_the_graph_does_not_take_is_an_error():
    with pytest.raises(ValueError, match=r"takes one example of shape \(4,\), not \(5,\)"):
        layer_costs(_residual(), (5,), BATCH)
