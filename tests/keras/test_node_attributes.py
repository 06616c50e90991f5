"""``layer.input`` / ``output`` / ``input_shape`` / ``output_shape`` from the Functional graph
(``tests/keras/test_applications_vs_tf.py`` compares them with TF on whole models)."""

from __future__ import annotations

import pytest

import simdist as tf


def test_attributes_of_a_called_layer():
    inputs = tf.keras.Input((4,), name="x")
    dense = tf.keras.layers.Dense(3)
    outputs = dense(inputs)
    model = tf.keras.Model(inputs, outputs)
    assert dense.input is inputs and dense.output is outputs
    assert dense.input_shape == (None, 4) and dense.output_shape == (None, 3)
    layer = model.layers[0]
    assert layer.output_shape == [(None, 4)] and layer.input_shape == [(None, 4)]
    assert layer.output is inputs
    # the transfer-learning pattern: a model up to an inner layer's output
    features = tf.keras.Model(model.input, model.layers[1].output)
    assert features.output_shape == (None, 3)


def test_merge_layer_shapes_are_lists():
    a, b = tf.keras.Input((2,)), tf.keras.Input((2,))
    add = tf.keras.layers.Add()
    add([a, b])
    assert add.input_shape == [(None, 2), (None, 2)] and add.output_shape == (None, 2)
    assert add.input == [a, b]


def test_uncalled_and_ambiguous_layers_raise_attribute_error():
    dense = tf.keras.layers.Dense(2)
    with pytest.raises(AttributeError, match="no inbound nodes"):
        dense.output  # noqa: B018
    with pytest.raises(AttributeError, match="never been called"):
        dense.output_shape  # noqa: B018
    dense(tf.keras.Input((3,)))
    dense(tf.keras.Input((5, 3)))
    with pytest.raises(AttributeError, match="different output shapes"):
        dense.output_shape  # noqa: B018
    assert dense.output.shape.as_list() == [None, 2]  # the first call's
