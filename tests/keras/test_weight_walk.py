"""``trainable_weights`` walks sub-layers in Keras's order, even after late changes."""

import simdist as tf
from simdist import keras


class _Block(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.own = tf.Variable(1.0, name="own")
        self.parts = [keras.layers.Dense(2), keras.layers.Dense(3)]

    def call(self, x):
        return self.parts[1](self.parts[0](x))


class _Custom(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.a = tf.Variable(2.0, name="a")
        self.b = tf.Variable(3.0, name="b")

    @property
    def trainable_weights(self):
        return [self.b]  # an override: asked through the property


def _names(weights):
    return [w.name for w in weights]


def test_order_is_own_weights_then_sub_layers_depth_first():
    block = _Block()
    block(tf.ones((1, 4)))
    d0, d1 = block.parts
    assert _names(block.trainable_weights) == _names(
        [block.own, d0.kernel, d0.bias, d1.kernel, d1.bias]
    )


def test_layer_appended_later_to_a_tracked_list_is_found():
    block = _Block()
    block(tf.ones((1, 4)))
    late = keras.layers.Dense(1)
    late.build((None, 3))
    block.parts.append(late)
    last = block.trainable_weights[-2:]
    assert last[0] is late.kernel and last[1] is late.bias


def test_frozen_sub_layer_and_overriding_sub_layer():
    block = _Block()
    block(tf.ones((1, 4)))
    block.parts[0].trainable = False
    custom = _Custom()
    block.extra = custom
    weights = block.trainable_weights
    assert all(w is not block.parts[0].kernel for w in weights)
    assert weights[-1] is custom.b and all(w is not custom.a for w in weights)


def test_shared_weights_listed_once():
    shared = keras.layers.Dense(2)
    model = keras.Sequential([shared])
    model(tf.ones((1, 3)))
    outer = _Block()
    outer.parts = [shared, shared]
    assert _names(outer.trainable_weights) == _names([outer.own, shared.kernel, shared.bias])
