"""The Functional API: tf.keras.Input, Model(inputs, outputs), shared layers, nested models."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf

L = tf.keras.layers


def _two_input_model():
    a = tf.keras.Input((3,), name="a")
    b = tf.keras.Input((2,), name="b")
    x = L.Dense(4, activation="relu", name="da")(a)
    y = L.Dense(4, name="db")(b)
    merged = L.Concatenate(name="cat")([L.Add(name="sum")([x, y]), a])
    out = L.Dense(1, name="head")(merged)
    return tf.keras.Model([a, b], out, name="two"), (a, b, out)


def test_input_is_symbolic_with_batch_axis_none():
    x = tf.keras.Input(shape=(28, 28), name="pixels")
    assert tuple(x.shape.as_list()) == (None, 28, 28)
    assert x.dtype == tf.float32
    assert x._keras_history[0].name == "pixels"
    assert tf.keras.Input((3,), batch_size=8).shape.as_list() == [8, 3]
    assert tf.keras.Input((None,), dtype="int32").dtype == tf.int32


def test_input_names_count_up_as_keras_2():
    assert [tf.keras.Input((1,))._keras_history[0].name for _ in range(2)] == ["input_1", "input_2"]


def test_functional_model_runs_the_graph():
    model, _ = _two_input_model()
    assert type(model).__name__ == "Functional" and isinstance(model, tf.keras.Model)
    assert [layer.name for layer in model.layers] == ["a", "b", "da", "db", "sum", "cat", "head"]
    xa = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    xb = np.random.default_rng(1).standard_normal((5, 2)).astype("float32")
    got = np.asarray(model([xa, xb]))
    da, db, head = (model.get_layer(n) for n in ("da", "db", "head"))
    x = np.maximum(xa @ da.kernel.numpy() + da.bias.numpy(), 0)
    y = xb @ db.kernel.numpy() + db.bias.numpy()
    want = np.concatenate([x + y, xa], 1) @ head.kernel.numpy() + head.bias.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(model({"a": xa, "b": xb})), want, rtol=1e-5)
    assert model.input_names == ["a", "b"] and model.output_names == ["head"]
    assert model.output_shape == (None, 1)


def test_weights_are_the_layers_in_order_and_named_without_model_scope():
    model, _ = _two_input_model()
    assert [w.name for w in model.trainable_weights] == [
        "da/kernel:0",
        "da/bias:0",
        "db/kernel:0",
        "db/bias:0",
        "head/kernel:0",
        "head/bias:0",
    ]
    assert model.count_params() == 3 * 4 + 4 + 2 * 4 + 4 + 7 + 1


def test_shared_layer_and_model_as_layer():
    shared = L.Dense(2, name="shared")
    a, b = tf.keras.Input((3,)), tf.keras.Input((3,))
    out = L.Subtract()([shared(a), shared(b)])
    siamese = tf.keras.Model([a, b], out)
    assert len(siamese.trainable_weights) == 2
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(np.asarray(siamese([x, x])), 0.0)
    inner_in = tf.keras.Input((4,))
    inner = tf.keras.Model(inner_in, L.Dense(3, name="inner_dense")(inner_in), name="inner")
    outer_in = tf.keras.Input((4,))
    outer = tf.keras.Model(outer_in, L.Dense(1)(inner(outer_in)))
    assert outer.get_layer("inner") is inner
    assert len(outer.trainable_weights) == 4
    assert np.asarray(outer(np.ones((2, 4), "float32"))).shape == (2, 1)


def test_unknown_dims_propagate_and_several_outputs():
    seq = tf.keras.Input((None, 3))
    states = L.LSTM(4, return_sequences=True, return_state=True)(seq)
    assert [t.shape.as_list() for t in states] == [[None, None, 4], [None, 4], [None, 4]]
    model = tf.keras.Model(seq, {"seq": states[0], "last": states[1]})
    out = model(np.zeros((2, 5, 3), "float32"))
    assert out["seq"].shape == (2, 5, 4) and out["last"].shape == (2, 4)


def test_training_flag_reaches_layers():
    x = tf.keras.Input((100,))
    model = tf.keras.Model(x, L.Dropout(0.5)(x))
    data = np.ones((2, 100), "float32")
    np.testing.assert_array_equal(np.asarray(model(data)), data)
    assert np.any(np.asarray(model(data, training=True)) == 0)


def test_graph_disconnected_and_bad_inputs():
    a, b = tf.keras.Input((2,)), tf.keras.Input((2,))
    out = L.Add()([a, b])
    with pytest.raises(ValueError, match="Graph disconnected"):
        tf.keras.Model(a, out)
    with pytest.raises(ValueError, match="must come from `tf.keras.Input`"):
        tf.keras.Model(np.zeros((1, 2)), out)
    model = tf.keras.Model([a, b], out)
    with pytest.raises(ValueError, match="expects 2 input"):
        model(np.zeros((1, 2), "float32"))


def test_keras_tensor_ops_record_op_layers_beside_lambda():
    x = tf.keras.Input((2,))
    assert type((x + 1)._keras_history[0]).__name__ == "TFOpLambda"
    with pytest.raises(TypeError, match="symbolic"):
        np.asarray(x)
    y = L.Lambda(lambda t: t * 2.0 + 1.0)(x)
    model = tf.keras.Model(x, y)
    np.testing.assert_allclose(np.asarray(model(np.ones((1, 2), "float32"))), 3.0)


def test_add_loss_in_call_is_per_call_and_dropped_while_building():
    class Penalty(L.Layer):
        def call(self, inputs):
            self.add_loss(tf.reduce_sum(inputs))
            return inputs

    x = tf.keras.Input((2,))
    model = tf.keras.Model(x, Penalty()(x))
    assert model.losses == []  # the graph-building probes added nothing
    model(np.ones((1, 2), "float32"))
    model(np.full((1, 2), 3.0, "float32"))
    assert [float(v) for v in model.losses] == [6.0]


def test_functional_fit_multi_output_loss_weights_and_logs():
    x = tf.keras.Input((3,))
    h = L.Dense(4, activation="tanh")(x)
    model = tf.keras.Model(x, [L.Dense(1, name="reg")(h), L.Dense(2, name="cls")(h)])
    model.compile(
        optimizer="sgd",
        loss=["mse", "sparse_categorical_crossentropy"],
        loss_weights=[1.0, 0.5],
        metrics={"cls": ["accuracy"]},
    )
    rng = np.random.default_rng(0)
    data = rng.standard_normal((16, 3)).astype("float32")
    targets = [rng.standard_normal((16, 1)).astype("float32"), rng.integers(0, 2, (16,))]
    logs = model.evaluate(data, targets, verbose=0, return_dict=True)
    assert set(logs) == {"loss", "reg_loss", "cls_loss", "cls_accuracy"}
    np.testing.assert_allclose(logs["loss"], logs["reg_loss"] + 0.5 * logs["cls_loss"], rtol=1e-5)
    history = model.fit(
        data, {"reg": targets[0], "cls": targets[1]}, epochs=2, batch_size=8, verbose=0
    )
    assert len(history.history["cls_loss"]) == 2
    assert model.metrics_names == ["loss", "reg_loss", "cls_loss", "cls_accuracy"]


def test_fit_class_weight_scales_examples():
    def make():
        tf.random.set_seed(1)
        inp = tf.keras.Input((2,))
        model = tf.keras.Model(inp, L.Dense(2)(inp))
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        return model

    data = np.array([[1.0, 0.0], [0.0, 1.0]], "float32")
    labels = np.array([0, 1])
    a, b = make(), make()
    a.fit(data, labels, class_weight={0: 2.0, 1: 0.5}, epochs=1, verbose=0, shuffle=False)
    b.fit(data, labels, sample_weight=np.array([2.0, 0.5]), epochs=1, verbose=0, shuffle=False)
    for wa, wb in zip(a.get_weights(), b.get_weights(), strict=True):
        np.testing.assert_array_equal(wa, wb)
    with pytest.raises(ValueError, match="keys from 0"):
        make().fit(data, labels, class_weight={1: 1.0}, verbose=0)


def test_sequential_add_pop_and_symbolic_sequential():
    model = tf.keras.Sequential()
    model.add(tf.keras.Input((3,)))
    model.add(L.Dense(2))
    model.add(L.Dense(1))
    model.pop()
    assert [type(x).__name__ for x in model.layers] == ["Dense"]
    x = tf.keras.Input((3,))
    functional = tf.keras.Model(x, model(x))
    assert functional.output_shape == (None, 2)


def test_model_from_config_rebuilds_a_functional_model():
    model, _ = _two_input_model()
    clone = tf.keras.Model.from_config(model.get_config())
    assert type(clone).__name__ == "Functional"
    assert [x.name for x in clone.layers] == [x.name for x in model.layers]
    clone.set_weights(model.get_weights())
    data = [np.ones((2, 3), "float32"), np.ones((2, 2), "float32")]
    np.testing.assert_array_equal(np.asarray(clone(data)), np.asarray(model(data)))


class _Counted(tf.keras.layers.Layer):
    """Doubles its input's last axis; counts its calls; ``wrong`` makes its declared rule
    disagree with what it computes."""

    def __init__(self, wrong=False, **kwargs):
        super().__init__(**kwargs)
        self.calls, self.wrong = 0, wrong

    def call(self, x):
        self.calls += 1
        return tf.concat([x, x], axis=-1)

    def compute_output_shape(self, input_shape):
        last = input_shape[-1] * (3 if self.wrong else 2)
        return tf.TensorShape([input_shape[0], last])


def test_a_layer_whose_own_rule_knows_the_shape_is_probed_once():
    layer = _Counted()
    out = layer(tf.keras.Input((3,)))
    assert layer.calls == 1 and out.shape.as_list() == [None, 6]


def test_a_rule_that_disagrees_with_the_first_probe_gets_the_second_probe():
    layer = _Counted(wrong=True)
    out = layer(tf.keras.Input((3,)))
    assert layer.calls == 2 and out.shape.as_list() == [None, 6]
