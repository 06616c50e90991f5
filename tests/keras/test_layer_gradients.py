"""Gradient checks of every new layer against central finite differences (float64).

``check_layer`` differentiates ``sum(layer(x) * w)`` (w fixed and random) with respect to
every input AND every trainable weight, and compares with central differences, where a
weight's entries are moved by assigning the variable.
"""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from tests.gradcheck import check_gradients

L = tf.keras.layers


def _objective(layer, arrays, training, proj):
    inputs = [tf.constant(a) for a in arrays]
    out = layer(inputs if len(inputs) > 1 else inputs[0], training=training)
    outs = out if isinstance(out, (list, tuple)) else [out]
    pairs = zip(outs, proj, strict=True)
    return sum(float(np.sum(np.asarray(o, np.float64) * p)) for o, p in pairs)


def check_layer(layer, *arrays, training=True, eps=1e-6, rtol=1e-5, atol=1e-7):
    arrays = [np.asarray(a, np.float64) for a in arrays]
    inputs = [tf.constant(a) for a in arrays]
    arg = inputs if len(inputs) > 1 else inputs[0]
    layer(arg, training=False)  # build
    rng = np.random.default_rng(0)
    variables = list(layer.trainable_weights)
    for v in variables:  # move weights off their initial values (ones/zeros hide bugs)
        v.assign(np.asarray(v.numpy()) + rng.uniform(-0.3, 0.3, tuple(v.shape)))
    with tf.GradientTape() as tape:
        for t in inputs:
            tape.watch(t)
        out = layer(arg, training=training)
        outs = out if isinstance(out, (list, tuple)) else [out]
        proj = [rng.standard_normal(tuple(o.shape)) for o in outs]
        loss = tf.add_n([tf.reduce_sum(o * p) for o, p in zip(outs, proj, strict=True)])
    analytic = tape.gradient(loss, inputs + variables)
    state = [np.array(w) for w in layer.get_weights()]

    def restore():
        layer.set_weights(state)  # training calls move BN's moving statistics

    for i, base in enumerate(arrays):
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            restore()
            up = _objective(layer, plus, training, proj)
            restore()
            down = _objective(layer, minus, training, proj)
            numeric[idx] = (up - down) / (2 * eps)
        assert analytic[i] is not None, f"input {i}: no gradient"
        np.testing.assert_allclose(
            np.asarray(analytic[i]), numeric, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}"
        )
    for j, variable in enumerate(variables):
        base = np.array(variable.numpy())
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                restore()
                moved = base.copy()
                moved[idx] += sign * eps
                variable.assign(moved)
                value = _objective(layer, arrays, training, proj)
                numeric[idx] += sign * value / (2 * eps)
        restore()
        grad = analytic[len(arrays) + j]
        assert grad is not None, f"weight {variable.name}: no gradient"
        np.testing.assert_allclose(
            np.asarray(tf.convert_to_tensor(grad)),
            numeric,
            rtol=rtol,
            atol=atol,
            err_msg=f"gradient of {variable.name}",
        )


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


F64 = {"dtype": "float64"}
CASES = {
    "reshape": (lambda: L.Reshape((3, 2), **F64), [(2, 6)]),
    "permute": (lambda: L.Permute((2, 1), **F64), [(2, 3, 2)]),
    "repeat_vector": (lambda: L.RepeatVector(2, **F64), [(2, 3)]),
    "zero_padding2d": (lambda: L.ZeroPadding2D((1, 2), **F64), [(1, 2, 2, 1)]),
    "upsampling2d": (lambda: L.UpSampling2D(2, **F64), [(1, 2, 2, 2)]),
    "add": (lambda: L.Add(**F64), [(2, 3), (2, 3)]),
    "subtract": (lambda: L.Subtract(**F64), [(2, 3), (2, 3)]),
    "multiply": (lambda: L.Multiply(**F64), [(2, 3), (2, 3)]),
    "average": (lambda: L.Average(**F64), [(2, 3), (2, 3), (2, 3)]),
    "maximum": (lambda: L.Maximum(**F64), [(2, 3), (2, 3)]),
    "minimum": (lambda: L.Minimum(**F64), [(2, 3), (2, 3)]),
    "concatenate": (lambda: L.Concatenate(axis=1, **F64), [(2, 2), (2, 3)]),
    "gap2d": (lambda: L.GlobalAveragePooling2D(**F64), [(2, 2, 3, 2)]),
    "gmp2d": (lambda: L.GlobalMaxPooling2D(**F64), [(2, 2, 3, 2)]),
    "gap1d": (lambda: L.GlobalAveragePooling1D(**F64), [(2, 3, 2)]),
    "gmp1d": (lambda: L.GlobalMaxPooling1D(**F64), [(2, 3, 2)]),
    "conv1d": (lambda: L.Conv1D(2, 3, padding="same", activation="tanh", **F64), [(2, 5, 2)]),
    "conv1d_causal": (
        lambda: L.Conv1D(2, 2, padding="causal", dilation_rate=2, **F64),
        [(1, 5, 2)],
    ),
    "conv1d_strided": (lambda: L.Conv1D(3, 2, strides=2, **F64), [(2, 5, 1)]),
    "layer_norm": (lambda: L.LayerNormalization(**F64), [(3, 4)]),
    "layer_norm_axes": (lambda: L.LayerNormalization(axis=[1, 2], **F64), [(2, 2, 3)]),
    "batch_norm_train": (lambda: L.BatchNormalization(**F64), [(5, 3)]),
    "batch_norm_infer": (lambda: L.BatchNormalization(**F64), [(5, 3)]),
    "batch_norm_4d": (lambda: L.BatchNormalization(**F64), [(3, 2, 2, 2)]),
    "sync_batch_norm": (lambda: L.experimental.SyncBatchNormalization(**F64), [(4, 3)]),
    "simple_rnn": (lambda: L.SimpleRNN(2, return_sequences=True, **F64), [(2, 3, 2)]),
    "lstm": (lambda: L.LSTM(2, return_state=True, **F64), [(2, 3, 2)]),
    "gru": (lambda: L.GRU(2, return_sequences=True, **F64), [(2, 3, 2)]),
    "gru_reset_before": (
        lambda: L.GRU(2, reset_after=False, go_backwards=True, **F64),
        [(2, 3, 2)],
    ),
    "rescaling": (lambda: L.Rescaling(0.5, offset=1.0, **F64), [(2, 3)]),
    "normalization": (
        lambda: L.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.5], **F64),
        [(3, 2)],
    ),
    "dense_in_lambda": (lambda: L.Lambda(lambda x: tf.nn.relu(x) * 2.0, **F64), [(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_gradients(name):
    make, shapes = CASES[name]
    arrays = [_x(*s, seed=i + 1) for i, s in enumerate(shapes)]
    check_layer(make(), *arrays, training=name != "batch_norm_infer")


def test_embedding_gradient_scatters_into_rows():
    layer = L.Embedding(5, 2, dtype="float64")
    ids = tf.constant(np.array([[1, 3, 1]], "int32"))
    layer(ids)

    def fn(table):
        layer.embeddings.assign(np.asarray(table))
        return tf.gather(table, ids)

    check_gradients(fn, np.random.default_rng(0).standard_normal((5, 2)))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(ids))
    grad = np.asarray(tf.convert_to_tensor(tape.gradient(loss, layer.embeddings)))
    np.testing.assert_array_equal(grad, [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]])
