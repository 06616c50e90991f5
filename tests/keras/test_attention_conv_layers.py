"""The attention, wrapper and transposed/depthwise convolution layers without TensorFlow:
gradient checks (float64), config round trips, training-mode dropout, masks, errors.

(Their values against real tf_keras: tests/keras/test_tf_attention_conv_layers.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from tests.keras.test_layer_gradients import check_layer

L = tf.keras.layers
F64 = {"dtype": "float64"}


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


class _Attend(L.Layer):
    """MultiHeadAttention called as ``mha(x, x, ...)``, for check_layer's one-input calls."""

    def __init__(self, mha, **call_kwargs):
        super().__init__(dtype="float64")
        self.mha = mha
        self.call_kwargs = call_kwargs

    def call(self, inputs, training=None):
        return self.mha(inputs, inputs, training=training, **self.call_kwargs)


@pytest.mark.parametrize(
    "layer, shapes",
    [
        (L.Conv2DTranspose(2, 3, strides=2, padding="same", **F64), [(1, 3, 3, 2)]),
        (
            L.Conv2DTranspose(2, (2, 3), strides=(3, 2), output_padding=(1, 0), **F64),
            [(1, 2, 3, 2)],
        ),
        (L.Conv2DTranspose(1, 2, dilation_rate=2, activation="tanh", **F64), [(1, 3, 3, 2)]),
        (L.Conv1DTranspose(2, 3, strides=2, padding="same", **F64), [(2, 3, 2)]),
        (L.DepthwiseConv2D(3, depth_multiplier=2, padding="same", **F64), [(1, 4, 4, 2)]),
        (L.DepthwiseConv2D(2, dilation_rate=2, **F64), [(1, 4, 4, 2)]),
        (L.SeparableConv2D(2, 2, strides=2, depth_multiplier=2, **F64), [(1, 4, 4, 2)]),
        (L.DepthwiseConv1D(2, padding="same", depth_multiplier=2, **F64), [(2, 4, 2)]),
        (L.SeparableConv1D(1, 2, padding="causal", dilation_rate=2, **F64), [(2, 5, 2)]),
        (L.SeparableConv1D(2, 2, strides=2, padding="same", **F64), [(2, 5, 2)]),
        (L.Attention(use_scale=True, score_mode="concat", **F64), [(2, 3, 2), (2, 4, 2)]),
        (L.AdditiveAttention(**F64), [(2, 3, 2), (2, 4, 2), (2, 4, 2)]),
        (L.Bidirectional(L.GRU(2, return_sequences=True, **F64), **F64), [(2, 3, 2)]),
        (L.Bidirectional(L.SimpleRNN(2, **F64), merge_mode="mul", **F64), [(2, 3, 2)]),
        (L.TimeDistributed(L.Dense(2, **F64), **F64), [(2, 3, 2)]),
        (L.Cropping2D(((1, 0), (0, 1)), **F64), [(1, 3, 3, 2)]),
        (
            _Attend(L.MultiHeadAttention(2, 2, value_dim=3, **F64), use_causal_mask=True),
            [(2, 3, 2)],
        ),
        (_Attend(L.MultiHeadAttention(2, 2, output_shape=(2, 2), **F64)), [(1, 2, 3)]),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, L.Layer) else None,
)
def test_gradients_match_finite_differences(layer, shapes):
    check_layer(layer, *[_rand(*s, seed=i) for i, s in enumerate(shapes)])


def _same_after_round_trip(layer, *inputs, call=None):
    call = call or (lambda lay: lay(*inputs))
    before = np.asarray(call(layer))
    config = layer.get_config()
    clone = type(layer).from_config(config)
    call(clone)
    clone.set_weights(layer.get_weights())
    np.testing.assert_array_equal(np.asarray(call(clone)), before)
    assert clone.get_config() == config
    return config


@pytest.mark.parametrize(
    "make, shape",
    [
        (
            lambda: L.Conv2DTranspose(3, 2, strides=2, output_padding=1, activation="relu"),
            (2, 3, 3, 2),
        ),
        (lambda: L.Conv1DTranspose(2, 3, padding="same"), (2, 5, 3)),
        (lambda: L.DepthwiseConv2D((2, 3), depth_multiplier=2, use_bias=False), (1, 4, 4, 2)),
        (lambda: L.SeparableConv2D(3, 2, padding="same", dilation_rate=2), (1, 4, 4, 2)),
        (lambda: L.Cropping2D(1), (1, 4, 4, 1)),
        (lambda: L.DepthwiseConv1D(3, padding="same", dilation_rate=2), (2, 6, 2)),
        (lambda: L.SeparableConv1D(2, 3, padding="causal"), (2, 6, 2)),
        (lambda: L.SeparableConv1D(2, 3, depth_multiplier=2, use_bias=False), (2, 6, 2)),
        (lambda: L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode="sum"), (2, 3, 2)),
        (lambda: L.Bidirectional(L.GRU(2), backward_layer=L.GRU(3, go_backwards=True)), (2, 3, 2)),
        (lambda: L.TimeDistributed(L.Dense(2, activation="tanh")), (2, 3, 4)),
    ],
)
def test_config_round_trip_gives_the_same_layer(make, shape):
    x = _rand(*shape).astype("float32")
    _same_after_round_trip(make(), x)


def test_attention_config_round_trips():
    q, v = _rand(2, 3, 4).astype("float32"), _rand(2, 5, 4, seed=1).astype("float32")
    for layer in (
        L.Attention(use_scale=True, score_mode="concat", dropout=0.25),
        L.AdditiveAttention(use_scale=False),
    ):
        config = _same_after_round_trip(layer, [q, v])
        assert config["dropout"] == layer.dropout
    mha = L.MultiHeadAttention(2, 3, value_dim=2, output_shape=6, dropout=0.5)
    config = _same_after_round_trip(mha, call=lambda lay: lay(q, v, use_causal_mask=True))
    assert config["query_shape"] == [2, 3, 4] and config["value_shape"] == [2, 5, 4]
    # from_config builds the weights at once, from the saved shapes (as Keras 2)
    rebuilt = L.MultiHeadAttention.from_config(config)
    assert [tuple(w.shape) for w in rebuilt.weights] == [tuple(w.shape) for w in mha.weights]


def test_multi_head_attention_weights_are_keras_shapes():
    mha = L.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=5, name="mha")
    mha(np.zeros((1, 4, 6), "float32"), np.zeros((1, 7, 8), "float32"))
    shapes = {w.name: tuple(w.shape) for w in mha.weights}
    assert shapes == {
        "mha/query/kernel:0": (6, 3, 2),
        "mha/query/bias:0": (3, 2),
        "mha/key/kernel:0": (8, 3, 2),
        "mha/key/bias:0": (3, 2),
        "mha/value/kernel:0": (8, 3, 5),
        "mha/value/bias:0": (3, 5),
        "mha/attention_output/kernel:0": (3, 5, 6),
        "mha/attention_output/bias:0": (6,),
    }


def test_causal_mask_hides_the_future():
    x = _rand(1, 5, 4).astype("float32")
    mha = L.MultiHeadAttention(2, 2)
    _, scores = mha(x, x, use_causal_mask=True, return_attention_scores=True)
    scores = np.asarray(scores)
    assert np.all(scores[:, :, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0)
    np.testing.assert_allclose(scores.sum(-1), 1.0, rtol=1e-6)
    # changing a later step leaves the earlier outputs as they were
    y = np.asarray(mha(x, x, use_causal_mask=True))
    x2 = x.copy()
    x2[:, 3:] += 1.0
    y2 = np.asarray(mha(x2, x2, use_causal_mask=True))
    np.testing.assert_array_equal(y2[:, :3], y[:, :3])
    assert not np.allclose(y2[:, 3:], y[:, 3:])


def test_keras_masks_of_the_inputs_reach_multi_head_attention():
    ids = np.array([[3, 1, 0, 0], [2, 2, 2, 0]])
    embedded = L.Embedding(5, 4, mask_zero=True)(ids)
    mha = L.MultiHeadAttention(1, 2)
    _, scores = mha(embedded, embedded, return_attention_scores=True)
    scores = np.asarray(scores)[:, 0]
    assert np.all(scores[0, :2, 2:] == 0) and np.all(scores[1, :3, 3:] == 0)
    # a masked query step masks its whole row: Keras's softmax then spreads evenly
    np.testing.assert_allclose(scores[0, 2:], 0.25)
    given = np.array(ids != 0)[:, None, :]
    _, explicit = mha(
        np.asarray(embedded),
        np.asarray(embedded),
        attention_mask=given,
        return_attention_scores=True,
    )
    np.testing.assert_array_equal(np.asarray(explicit)[:, 0][:, :2], scores[:, :2])


def test_dropout_only_in_training():
    q, v = _rand(2, 3, 4).astype("float32"), _rand(2, 5, 4, seed=1).astype("float32")
    mha = L.MultiHeadAttention(2, 2, dropout=0.5)
    base = np.asarray(mha(q, v))
    np.testing.assert_array_equal(np.asarray(mha(q, v, training=False)), base)
    assert not np.allclose(np.asarray(mha(q, v, training=True)), base)
    att = L.Attention(dropout=0.5)
    out, weights = att([q, v], return_attention_scores=True, training=True)
    kept = np.asarray(weights)
    assert np.any(kept == 0)  # the returned scores are the dropped weights, as Keras's
    np.testing.assert_allclose(np.asarray(out), kept @ v, rtol=1e-5)
    out_inf = np.asarray(att([q, v], training=False))
    assert not np.allclose(out_inf, np.asarray(out))


def test_attention_output_mask_is_the_query_mask():
    q, v = _rand(2, 3, 4).astype("float32"), _rand(2, 5, 4, seed=1).astype("float32")
    q_mask = np.array([[True, True, False], [True, False, False]])
    out = L.Attention()([q, v], mask=[q_mask, None])
    assert np.all(np.asarray(out)[~q_mask] == 0)
    np.testing.assert_array_equal(np.asarray(out._keras_mask), q_mask)


def test_bidirectional_weights_and_state_outputs():
    layer = L.Bidirectional(L.LSTM(3, return_state=True, name="lstm"), name="bi")
    out = layer(_rand(2, 4, 2).astype("float32"))
    assert [tuple(o.shape) for o in out] == [(2, 6)] + [(2, 3)] * 4
    names = [w.name for w in layer.weights]
    assert names[0] == "bi/forward_lstm/lstm_cell/kernel:0"
    assert names[3] == "bi/backward_lstm/lstm_cell/kernel:0" and len(names) == 6
    assert layer.backward_layer.go_backwards and not layer.forward_layer.go_backwards
    assert layer.compute_output_shape((None, 4, 2))[0].as_list() == [None, 6]


def test_bidirectional_in_a_saved_model(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((4, 2)), L.Bidirectional(L.GRU(2)), L.Dense(1)])
    x = _rand(3, 4, 2).astype("float32")
    model.save(tmp_path / "m")
    loaded = tf.keras.models.load_model(tmp_path / "m")
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(model(x)))


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: L.Conv2DTranspose(2, 3, strides=2, output_padding=2), ValueError, "greater than"),
        (lambda: L.Bidirectional(L.LSTM(2), merge_mode="max"), ValueError, "merge mode"),
        (lambda: L.Attention(score_mode="general"), ValueError, "score_mode"),
        (lambda: L.DepthwiseConv1D(3, padding="causal"), ValueError, "Causal padding"),
        (lambda: L.DepthwiseConv2D(3, strides=2, dilation_rate=2), ValueError, "not compatible"),
        (
            lambda: L.SeparableConv2D(2, 3, data_format="channels_first"),
            NotImplementedError,
            "channels_last",
        ),
        (
            lambda: L.Bidirectional(L.GRU(2), backward_layer=L.GRU(2, return_sequences=True)),
            ValueError,
            "return_sequences",
        ),
    ],
)
def test_bad_arguments_are_refused(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_partial_attention_axes_are_refused():
    x = np.zeros((1, 2, 3, 4), "float32")
    with pytest.raises(NotImplementedError, match="attention_axes"):
        L.MultiHeadAttention(2, 2, attention_axes=(2,))(x, x)
    L.MultiHeadAttention(2, 2, attention_axes=(1, 2))(x, x)  # all of them: allowed
