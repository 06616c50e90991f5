"""Layer: attribute tracking, names, weights, build-on-first-call, training propagation."""

import numpy as np
import pytest

import simdist as tf
from simdist import keras
from simdist.core.ops import reduction_ops
from simdist.keras import backend
from simdist.keras.layers import Dense, Dropout, Layer


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()
    yield
    backend.clear_session()


def test_unique_names_per_class_reset_by_clear_session():
    names = [Dense(1).name, Dense(1).name, keras.layers.Conv2D(1, 1).name, Dense(1).name]
    assert names == ["dense", "dense_1", "conv2d", "dense_2"]
    assert keras.layers.MaxPooling2D().name == "max_pooling2d"
    backend.clear_session()
    assert Dense(1).name == "dense"
    assert Dense(1, name="head").name == "head"


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        Dense(3, kernel_size=3)


def test_build_on_first_call_with_input_shape():
    layer = Dense(4)
    assert not layer.built and layer.weights == []
    out = layer(np.ones((2, 3), np.float32))
    assert layer.built
    assert out.shape == (2, 4)
    assert [tuple(w.shape) for w in layer.weights] == [(3, 4), (4,)]
    assert [w.name for w in layer.weights] == ["dense/kernel:0", "dense/bias:0"]


def test_numpy_float64_input_is_cast_to_layer_dtype():
    out = Dense(2)(np.ones((1, 3)))
    assert out.dtype == tf.float32


class Block(Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.first = Dense(3)
        self.pair = [Dense(2), Dense(1)]
        self.named = {"b": Dense(5), "a": Dense(6)}
        self.scale = tf.Variable(2.0, name="scale")
        self.count = tf.Variable(0, trainable=False, name="count")

    def call(self, inputs):
        x = self.first(inputs)
        x = self.pair[1](self.pair[0](x))
        return self.named["a"](self.named["b"](x)) * self.scale


def test_tracking_of_layers_in_attributes_lists_and_dicts():
    block = Block()
    block(np.ones((2, 4), np.float32))
    subs = block._flatten_layers(include_self=False)
    # dict entries are visited in sorted-key order ('a' before 'b'), as tf.nest does
    assert [x.name for x in subs] == ["dense", "dense_1", "dense_2", "dense_4", "dense_3"]
    names = [v.name for v in block.trainable_variables]
    assert names[0] == "scale:0"  # own weights first, then sub-layers'
    assert names[1:3] == ["block/dense/kernel:0", "block/dense/bias:0"]
    assert len(block.trainable_variables) == 1 + 2 * 5
    assert [v.name for v in block.non_trainable_variables] == ["count:0"]


def test_reassigning_an_attribute_untracks_the_old_value():
    block = Block()
    block.scale = tf.Variable(3.0, name="other")
    block.first = Dense(1, name="replacement")
    assert [v.name for v in block._trainable_weights] == ["other:0"]
    assert block._flatten_layers(include_self=False)[-1].name == "replacement"


def test_forgetting_super_init_is_explained():
    class Broken(Layer):
        def __init__(self):
            self.units = 3

    with pytest.raises(RuntimeError, match="super"):
        Broken()


def test_trainable_false_moves_weights_to_non_trainable():
    layer = Dense(2)
    layer(np.ones((1, 2), np.float32))
    layer.trainable = False
    assert layer.trainable_weights == []
    assert len(layer.non_trainable_weights) == 2


def test_get_set_weights_round_trip_and_count_params():
    layer = Dense(4)
    layer.build((None, 3))
    assert layer.count_params() == 3 * 4 + 4
    new = [np.arange(12, dtype=np.float32).reshape(3, 4), np.ones(4, np.float32)]
    layer.set_weights(new)
    for got, want in zip(layer.get_weights(), new, strict=True):
        np.testing.assert_array_equal(got, want)


def test_set_weights_errors_name_layer_and_shapes():
    layer = Dense(4)
    layer.build((None, 3))
    with pytest.raises(
        ValueError,
        match=r"Layer dense weight shape \(3, 4\) is not compatible "
        r"with provided weight shape \(4, 4\)",
    ):
        layer.set_weights([np.zeros((4, 4)), np.zeros(4)])
    with pytest.raises(
        ValueError,
        match='layer "dense" with a weight list of length 1, but the layer was expecting 2 weights',
    ):
        layer.set_weights([np.zeros((3, 4))])
    np.testing.assert_array_equal(layer.get_weights()[1], np.zeros(4))  # nothing assigned


def test_count_params_before_build_raises():
    with pytest.raises(ValueError, match="isn't built"):
        Dense(3).count_params()


def test_add_weight_on_read_cannot_be_trainable():
    layer = Layer()
    with pytest.raises(ValueError, match="ON_READ"):
        layer.add_weight(
            "w", shape=(), trainable=True, synchronization=tf.VariableSynchronization.ON_READ
        )
    w = layer.add_weight(
        "w",
        shape=(2,),
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )
    assert not w.trainable and w.aggregation is tf.VariableAggregation.SUM
    assert w.name == "layer/w:0"


def test_add_weight_goes_through_variable_creator_scope():
    seen = []

    def creator(next_creator, **kwargs):
        seen.append(kwargs["name"])
        return next_creator(**kwargs)

    with tf.variable_creator_scope(creator):
        Dense(2)(np.ones((1, 3), np.float32))
    assert seen == ["dense/kernel", "dense/bias"]


class Recorder(Layer):
    def __init__(self):
        super().__init__()
        self.seen = []

    def call(self, inputs, training=None):
        self.seen.append(training)
        return inputs


class Outer(keras.Model):
    def __init__(self):
        super().__init__()
        self.inner = Recorder()
        self.other = Recorder()

    def call(self, inputs, training=None):
        return self.other(self.inner(inputs), training=False)


def test_training_propagates_to_nested_calls_unless_overridden():
    model = Outer()
    x = np.ones((1, 2), np.float32)
    model(x, training=True)
    model(x)
    assert model.inner.seen == [True, None]
    assert model.other.seen == [False, False]


def test_layers_without_training_argument_accept_it():
    out = Dense(1)(np.ones((1, 1), np.float32), training=True)
    assert out.shape == (1, 1)


def test_dropout_inside_model_obeys_propagated_training():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.drop = Dropout(0.5, seed=1)

        def call(self, inputs):
            return self.drop(inputs)

    net = Net()
    x = np.ones((8, 8), np.float32)
    np.testing.assert_array_equal(net(x).numpy(), x)
    trained = net(x, training=True).numpy()
    assert set(np.unique(trained)) <= {0.0, 2.0} and (trained == 0).any()


def test_subclassed_model_layers_and_variable_names():
    class MyModel(keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = Dense(3, activation="relu")
            self.d2 = Dense(1)

        def call(self, inputs):
            return self.d2(self.d1(inputs))

    model = MyModel()
    assert model.name == "my_model"
    assert [x.name for x in model.layers] == ["dense", "dense_1"]
    model(np.ones((2, 5), np.float32))
    assert [v.name for v in model.trainable_variables] == [
        "my_model/dense/kernel:0",
        "my_model/dense/bias:0",
        "my_model/dense_1/kernel:0",
        "my_model/dense_1/bias:0",
    ]
    assert model.get_layer("dense_1") is model.d2
    assert model.get_layer(index=0) is model.d1
    assert model.count_params() == 5 * 3 + 3 + 3 + 1


def test_model_build_runs_a_trial_call():
    class M(keras.Model):
        def __init__(self):
            super().__init__()
            self.d = Dense(2)

        def call(self, inputs):
            return self.d(inputs)

    m = M()
    m.build((None, 7))
    assert m.built and [tuple(w.shape) for w in m.weights] == [(7, 2), (2,)]
    with pytest.raises(ValueError, match="Input shape must be defined"):
        M().build(None)


def test_functional_model_needs_keras_tensors():
    # The Functional API exists now (tests/keras/test_functional.py); non-symbolic inputs
    # and outputs are refused with a message that says what they must be.
    with pytest.raises(ValueError, match="must come from `tf.keras.Input`"):
        keras.Model(inputs=1, outputs=2)


def test_gradients_flow_through_layers():
    layer = Dense(2, activation="relu")
    x = tf.constant([[1.0, -2.0, 0.5]])
    with tf.GradientTape() as tape:
        y = reduction_ops.reduce_sum(layer(x))
    grads = tape.gradient(y, layer.trainable_variables)
    assert all(g is not None for g in grads)
    assert grads[0].shape == (3, 2)


def test_add_loss_collects_from_sublayers():
    block = Block()
    block.first.add_loss(lambda: tf.constant(1.5))
    block.add_loss(tf.constant(0.5))
    assert sorted(float(x) for x in block.losses) == [0.5, 1.5]
