"""Differential tests against TF 2.21 + tf_keras: attention, wrapper and transposed/depthwise
convolution layers, with the same weights.

Each case builds the layer on inputs from a fixed seed (simdist first; TF's layer then gets
simdist's initial weights through ``set_weights``, so the weight order and shapes must be
Keras's), and compares the weight names, the outputs (attention scores and states too), and
the gradients of a fixed random projection of the outputs with respect to every input and
every trainable weight. All cases run in one TF subprocess.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        rng = np.random.default_rng({seed})
        xs = [rng.standard_normal(s).astype("float32") for s in {shapes}]
        masks = [tf.constant(m) for m in {masks}]
        L = tf.keras.layers
        layer = {expr}
        inputs = [tf.constant(x) for x in xs]

        def run():
            return {call}

        run()
        if weights is not None:
            layer.set_weights(weights)
        start = layer.get_weights()
        with tf.GradientTape() as tape:
            for t in inputs:
                tape.watch(t)
            out = run()
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            proj = np.random.default_rng(1)
            loss = tf.add_n([
                tf.reduce_sum(o * proj.standard_normal(tuple(o.shape)).astype("float32"))
                for o in outs
            ])
        grads = tape.gradient(loss, inputs + list(layer.trainable_weights))
        return {{
            "weights": start,
            "names": np.array([w.name for w in layer.weights] or ["-"]),
            "out": [o.numpy() for o in outs],
            "grads": [np.zeros(1) if g is None else tf.convert_to_tensor(g).numpy()
                      for g in grads],
        }}
    """
)


def _mask(shape, seed, keep_first=True):
    """A fixed bool mask (as a literal) with the first position of the last axis kept."""
    import numpy as np

    mask = np.random.default_rng(seed).random(shape) > 0.4
    if keep_first:
        mask[..., 0] = True
    return f"np.array({mask.tolist()!r})"


def _steps(shape, seed):
    """A float ``[batch, time, 1]`` 0/1 literal: which steps a ``Masking`` layer keeps."""
    import numpy as np

    keep = np.random.default_rng(seed).random(shape) > 0.3
    keep[:, 0] = True
    return f"np.array({keep[..., None].astype(float).tolist()!r}, 'float32')"


Q, V = "inputs[0]", "inputs[1]"
MASKED_Q, MASKED_V = "L.Masking()(inputs[0] * masks[0])", "L.Masking()(inputs[1] * masks[1])"
# name: (layer expression, input shapes, call expression, mask literals)
CASES = {
    # MultiHeadAttention
    "mha_self": ("L.MultiHeadAttention(2, 3, name='mha')", [(2, 5, 4)], f"layer({Q}, {Q})", []),
    "mha_cross_key_scores": (
        "L.MultiHeadAttention(3, 2, value_dim=4, name='mha')",
        [(2, 4, 6), (2, 5, 3), (2, 5, 2)],
        f"layer({Q}, {V}, inputs[2], return_attention_scores=True)",
        [],
    ),
    "mha_causal": (
        "L.MultiHeadAttention(2, 2, name='mha')",
        [(2, 5, 4)],
        f"layer({Q}, {Q}, use_causal_mask=True, return_attention_scores=True)",
        [],
    ),
    "mha_mask_no_bias_out_dim": (
        "L.MultiHeadAttention(2, 3, use_bias=False, output_shape=5, name='mha')",
        [(2, 4, 3), (2, 6, 3)],
        f"layer({Q}, {V}, attention_mask=masks[0], return_attention_scores=True)",
        [_mask((2, 4, 6), 3)],
    ),
    "mha_mask_and_causal": (
        "L.MultiHeadAttention(1, 4, name='mha')",
        [(2, 5, 3), (2, 5, 2)],
        f"layer({Q}, {V}, attention_mask=masks[0], use_causal_mask=True)",
        [_mask((2, 5, 5), 4)],
    ),
    "mha_robust_masking": (
        "L.MultiHeadAttention(2, 2, softmax_robust_masking=True, name='mha')",
        [(2, 4, 3), (2, 5, 3)],
        f"layer({Q}, {V}, attention_mask=masks[0], return_attention_scores=True)",
        [_mask((2, 4, 5), 14)],
    ),
    "mha_4d": (
        "L.MultiHeadAttention(2, 2, name='mha')",
        [(2, 2, 3, 4), (2, 2, 2, 4)],
        f"layer({Q}, {V}, return_attention_scores=True)",
        [],
    ),
    "mha_keras_masks": (  # the Keras masks of query and value (Masking layers)
        "L.MultiHeadAttention(2, 2, name='mha')",
        [(2, 5, 3), (2, 4, 3)],
        f"layer({MASKED_Q}, {MASKED_V}, return_attention_scores=True)",
        [_steps((2, 5), 9), _steps((2, 4), 10)],
    ),
    # Attention / AdditiveAttention
    "attention_dot": ("L.Attention(name='att')", [(2, 4, 3), (2, 5, 3)], f"layer([{Q}, {V}])", []),
    "attention_scale_key_scores": (
        "L.Attention(use_scale=True, name='att')",
        [(2, 4, 3), (2, 5, 2), (2, 5, 3)],
        f"layer([{Q}, {V}, inputs[2]], return_attention_scores=True)",
        [],
    ),
    "attention_concat_masks": (
        "L.Attention(use_scale=True, score_mode='concat', name='att')",
        [(2, 4, 3), (2, 5, 3)],
        f"layer([{Q}, {V}], mask=[masks[0], masks[1]], return_attention_scores=True)",
        [_mask((2, 4), 5), _mask((2, 5), 6)],
    ),
    "attention_causal": (
        "L.Attention(name='att')",
        [(2, 5, 3), (2, 5, 3)],
        f"layer([{Q}, {V}], use_causal_mask=True, return_attention_scores=True)",
        [],
    ),
    "additive": (
        "L.AdditiveAttention(name='att')",
        [(2, 4, 3), (2, 5, 3)],
        f"layer([{Q}, {V}], mask=[None, masks[0]], return_attention_scores=True)",
        [_mask((2, 5), 7)],
    ),
    "additive_no_scale_causal": (
        "L.AdditiveAttention(use_scale=False, name='att')",
        [(2, 4, 3), (2, 4, 3), (2, 4, 3)],
        f"layer([{Q}, {V}, inputs[2]], use_causal_mask=True)",
        [],
    ),
    "attention_keras_masks": (
        "L.Attention(name='att')",
        [(2, 4, 3), (2, 5, 3)],
        f"layer([{MASKED_Q}, {MASKED_V}], return_attention_scores=True)",
        [_steps((2, 4), 11), _steps((2, 5), 12)],
    ),
    # Bidirectional
    "bi_lstm_concat": (
        "L.Bidirectional(L.LSTM(3, return_sequences=True, name='lstm'), name='bi')",
        [(2, 5, 2)],
        f"layer({Q})",
        [],
    ),
    "bi_gru_sum_state": (
        "L.Bidirectional(L.GRU(2, return_state=True, name='gru'), merge_mode='sum', name='bi')",
        [(2, 4, 3)],
        f"layer({Q})",
        [],
    ),
    "bi_rnn_none_seq": (
        "L.Bidirectional(L.SimpleRNN(2, return_sequences=True, name='rnn'), merge_mode=None,"
        " name='bi')",
        [(2, 4, 3)],
        f"layer({Q})",
        [],
    ),
    "bi_lstm_mask_ave": (
        "L.Bidirectional(L.LSTM(2, return_sequences=True, name='lstm'), merge_mode='ave',"
        " name='bi')",
        [(3, 5, 2)],
        f"layer({Q}, mask=masks[0])",
        [_mask((3, 5), 8)],
    ),
    "bi_gru_keras_mask_state": (
        "L.Bidirectional(L.GRU(2, return_sequences=True, return_state=True, name='gru'),"
        " name='bi')",
        [(3, 5, 2)],
        f"layer({MASKED_Q})",
        [_steps((3, 5), 13)],
    ),
    "bi_lstm_initial_state_mul": (
        "L.Bidirectional(L.LSTM(2, name='lstm'), merge_mode='mul', name='bi')",
        [(2, 4, 3), (2, 2), (2, 2), (2, 2), (2, 2)],
        f"layer({Q}, initial_state=inputs[1:])",
        [],
    ),
    "bi_backward_layer": (
        "L.Bidirectional(L.GRU(2, return_sequences=True, name='f'), backward_layer=L.GRU(3,"
        " return_sequences=True, go_backwards=True, name='b'), name='bi')",
        [(2, 4, 3)],
        f"layer({Q})",
        [],
    ),
    # Conv2DTranspose / Conv1DTranspose
    "ct_valid": ("L.Conv2DTranspose(3, 3, name='ct')", [(2, 4, 4, 2)], f"layer({Q})", []),
    "ct_same_s2": (
        "L.Conv2DTranspose(2, 3, strides=2, padding='same', name='ct')",
        [(2, 3, 4, 3)],
        f"layer({Q})",
        [],
    ),
    "ct_valid_k2_s3_relu": (
        "L.Conv2DTranspose(2, 2, strides=3, activation='relu', name='ct')",
        [(2, 3, 3, 2)],
        f"layer({Q})",
        [],
    ),
    "ct_same_outpad": (
        "L.Conv2DTranspose(2, 3, strides=2, padding='same', output_padding=1, name='ct')",
        [(2, 3, 3, 2)],
        f"layer({Q})",
        [],
    ),
    "ct_valid_outpad_rect": (
        "L.Conv2DTranspose(2, (3, 2), strides=(2, 3), output_padding=(1, 2), use_bias=False,"
        " name='ct')",
        [(2, 3, 2, 2)],
        f"layer({Q})",
        [],
    ),
    "ct_dilated_same": (
        "L.Conv2DTranspose(2, 3, dilation_rate=2, padding='same', name='ct')",
        [(2, 5, 5, 2)],
        f"layer({Q})",
        [],
    ),
    "ct_dilated_valid": (
        "L.Conv2DTranspose(3, 2, dilation_rate=2, name='ct')",
        [(2, 4, 3, 2)],
        f"layer({Q})",
        [],
    ),
    "ct1d_same_s2": (
        "L.Conv1DTranspose(3, 3, strides=2, padding='same', name='ct')",
        [(2, 5, 2)],
        f"layer({Q})",
        [],
    ),
    "ct1d_valid_outpad": (
        "L.Conv1DTranspose(2, 4, strides=3, output_padding=2, name='ct')",
        [(2, 4, 3)],
        f"layer({Q})",
        [],
    ),
    # DepthwiseConv2D / SeparableConv2D
    "dw_valid": ("L.DepthwiseConv2D(3, name='dw')", [(2, 5, 5, 3)], f"layer({Q})", []),
    "dw_same_s2_mult": (
        "L.DepthwiseConv2D((3, 2), strides=2, padding='same', depth_multiplier=2, name='dw')",
        [(2, 5, 6, 3)],
        f"layer({Q})",
        [],
    ),
    "dw_dilated_same": (
        "L.DepthwiseConv2D(3, dilation_rate=2, padding='same', use_bias=False, name='dw')",
        [(2, 6, 5, 2)],
        f"layer({Q})",
        [],
    ),
    "dw_dilated_valid_relu": (
        "L.DepthwiseConv2D(2, dilation_rate=(2, 1), depth_multiplier=3, activation='relu',"
        " name='dw')",
        [(2, 5, 4, 2)],
        f"layer({Q})",
        [],
    ),
    "sep_valid": ("L.SeparableConv2D(4, 3, name='sep')", [(2, 5, 5, 3)], f"layer({Q})", []),
    "sep_same_s2_mult": (
        "L.SeparableConv2D(3, 3, strides=2, padding='same', depth_multiplier=2,"
        " activation='relu', name='sep')",
        [(2, 6, 5, 2)],
        f"layer({Q})",
        [],
    ),
    "sep_dilated": (
        "L.SeparableConv2D(2, 2, dilation_rate=2, padding='same', name='sep')",
        [(2, 5, 5, 3)],
        f"layer({Q})",
        [],
    ),
    "dw1d_dilated_mult": (
        "L.DepthwiseConv1D(3, dilation_rate=2, depth_multiplier=2, name='dw')",
        [(2, 7, 3)],
        f"layer({Q})",
        [],
    ),
    "dw1d_same_s2": (
        "L.DepthwiseConv1D(2, strides=2, padding='same', name='dw')",
        [(2, 7, 2)],
        f"layer({Q})",
        [],
    ),
    "sep1d_valid_relu": (
        "L.SeparableConv1D(3, 3, activation='relu', name='sep')",
        [(2, 6, 2)],
        f"layer({Q})",
        [],
    ),
    "sep1d_causal_mult": (
        "L.SeparableConv1D(2, 2, padding='causal', depth_multiplier=2, name='sep')",
        [(2, 5, 3)],
        f"layer({Q})",
        [],
    ),
    # TimeDistributed, Cropping2D
    "td_dense": (
        "L.TimeDistributed(L.Dense(3, name='d'), name='td')",
        [(2, 4, 5)],
        f"layer({Q})",
        [],
    ),
    "td_conv": (
        "L.TimeDistributed(L.Conv2D(2, 2, name='c'), name='td')",
        [(2, 3, 4, 4, 2)],
        f"layer({Q})",
        [],
    ),
    "cropping2d": (
        "L.Cropping2D(((1, 0), (2, 1)), name='crop')",
        [(2, 5, 6, 2)],
        f"layer({Q})",
        [],
    ),
}


def _source(name: str) -> str:
    expr, shapes, call, masks = CASES[name]
    return _CASE.format(
        seed=sum(map(ord, name)),
        shapes=repr(shapes),
        masks="[" + ", ".join(masks) + "]",
        expr=expr,
        call=call,
    )


SOURCES = {name: _source(name) for name in CASES}
# Keras 2 names TimeDistributed's inner weights in the wrapper's scope (td/kernel:0), simdist
# in the inner layer's own (td/d/kernel:0): documented in simdist/keras/layers/wrappers.py.
_OWN_NAMES = {"td_dense", "td_conv"}
DEVICES = dict.fromkeys(SOURCES, 1)

# Under MirroredStrategy: the layer is made (and built) in the strategy's scope, each replica
# calls it on its slice of the batch, and the weight gradients are summed over replicas.
_MIRRORED_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        strategy = tf.distribute.MirroredStrategy(
            devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
        rng = np.random.default_rng({seed})
        parts = np.split(rng.standard_normal({shape}).astype("float32"), len(devices))
        L = tf.keras.layers
        with strategy.scope():
            layer = {expr}
            x = tf.constant(parts[0])
            {call}
            if weights is not None:
                layer.set_weights(weights)
        start = layer.get_weights()
        values = strategy.experimental_distribute_values_from_function(
            lambda ctx: tf.constant(parts[ctx.replica_id_in_sync_group]))

        def step(x):
            with tf.GradientTape() as tape:
                out = {call}
                loss = tf.reduce_sum(out * out * 0.5 + out)
            return out, tape.gradient(loss, layer.trainable_weights)

        outs, grads = strategy.run(step, args=(values,))
        local = [np.asarray(v) for v in strategy.experimental_local_results(outs)]
        summed = [np.asarray(strategy.reduce("SUM", g, axis=None)) for g in grads]
        return {{"weights": start, "out": local, "grads": summed}}
    """
)
MIRRORED_CASES = {
    "mha": ("L.MultiHeadAttention(2, 2)", (8, 4, 3), "layer(x, x, use_causal_mask=True)"),
    "bidirectional": ("L.Bidirectional(L.LSTM(2, return_sequences=True))", (8, 3, 2), "layer(x)"),
    "conv2d_transpose": (
        "L.Conv2DTranspose(2, 3, strides=2, padding='same')",
        (8, 3, 3, 2),
        "layer(x)",
    ),
    "depthwise": ("L.DepthwiseConv2D(2, depth_multiplier=2)", (8, 4, 4, 2), "layer(x)"),
    "separable": ("L.SeparableConv2D(3, 2, padding='same')", (8, 4, 4, 2), "layer(x)"),
    "attention": ("L.Attention(use_scale=True)", (8, 4, 3), "layer([x, x])"),
}
for _name, (_expr, _shape, _call) in MIRRORED_CASES.items():
    for _n in (2, 4):
        _key = f"mirrored{_n}_{_name}"
        SOURCES[_key] = _MIRRORED_CASE.format(
            seed=sum(map(ord, _name)), shape=repr(_shape), expr=_expr, call=_call
        )
        DEVICES[_key] = _n


@pytest.fixture(scope="module")
def compared():
    ours = {name: tf_oracle.run_simdist(src, DEVICES[name]) for name, src in SOURCES.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], DEVICES[name]) for name, src in SOURCES.items()}
    )
    return ours, theirs, failures


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_layer_matches_tf(compared, name):
    ours, theirs, failures = compared
    assert name not in failures, failures.get(name)
    recurrent = name.startswith("bi_") or name.endswith("bidirectional")
    tolerance = 1e-4 if recurrent else 1e-5  # the RNN tests' tolerance
    skip = ("weights", "names") if name in _OWN_NAMES else ("weights",)
    tf_oracle.assert_match(
        name, ours[name], theirs[name], rtol=tolerance, atol=tolerance, skip=skip
    )


# The other direction: layers made and configured by tf_keras, rebuilt in simdist from TF's
# get_config() (a saved Keras 2 model's layer entries) and given TF's weights.
_FROM_TF = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        import json
        L = tf.keras.layers
        rng = np.random.default_rng(0)
        x3 = rng.standard_normal((2, 5, 2)).astype("float32")
        x4 = rng.standard_normal((2, 5, 5, 2)).astype("float32")
        made = [
            (L.Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=1), [x4]),
            (L.Conv1DTranspose(2, 3, dilation_rate=2, activation="relu"), [x3]),
            (L.DepthwiseConv2D(2, depth_multiplier=2, bias_initializer="ones"), [x4]),
            (L.SeparableConv2D(3, 2, padding="same", depth_multiplier=2), [x4]),
            (L.Cropping2D(((1, 2), (0, 1))), [x4]),
            (L.MultiHeadAttention(2, 3, value_dim=2, output_shape=4), [x3, x3]),
            (L.Attention(use_scale=True, score_mode="concat"), [[x3, x3]]),
            (L.AdditiveAttention(), [[x3, x3]]),
            (L.Bidirectional(L.LSTM(2, return_sequences=True), merge_mode="ave"), [x3]),
            (L.Bidirectional(L.GRU(2), backward_layer=L.GRU(3, go_backwards=True)), [x3]),
            (L.TimeDistributed(L.Dense(3)), [x3]),
        ]
        out = {}
        for i, (layer, args) in enumerate(made):
            result = layer(*args)
            config = json.dumps(
                {"class_name": type(layer).__name__, "config": layer.get_config()},
                default=lambda v: dict(v) if hasattr(v, "keys") else list(v),
            )
            out[f"config{i}"] = np.frombuffer(config.encode(), np.uint8)
            out[f"weights{i}"] = [w.numpy() for w in layer.weights] or [np.zeros(0)]
            out[f"out{i}"] = result.numpy()
        out["x3"], out["x4"] = x3, x4
        return out
    """
)


def test_tf_keras_configs_and_weights_load_in_simdist():
    import json

    import numpy as np

    import simdist

    theirs, failures = tf_oracle.run_tf({"from_tf": (_FROM_TF, {}, 1)})
    assert not failures, failures
    result = theirs["from_tf"]
    x3, x4 = result["x3"][0], result["x4"][0]
    count = len([k for k in result if k.startswith("config")])
    assert count == 11
    for i in range(count):
        entry = json.loads(bytes(result[f"config{i}"][0]).decode())
        layer = getattr(simdist.keras.layers, entry["class_name"]).from_config(entry["config"])
        images = ("Conv2DTranspose", "DepthwiseConv2D", "SeparableConv2D", "Cropping2D")
        x = x4 if entry["class_name"] in images else x3
        if entry["class_name"] == "MultiHeadAttention":
            call = lambda lay: lay(x3, x3)  # noqa: E731
        elif entry["class_name"] in ("Attention", "AdditiveAttention"):
            call = lambda lay: lay([x3, x3])  # noqa: E731
        else:
            call = lambda lay, x=x: lay(x)  # noqa: E731
        call(layer)
        weights = [w for w in result[f"weights{i}"] if w.size]
        layer.set_weights(weights)
        np.testing.assert_allclose(
            np.asarray(call(layer)),
            result[f"out{i}"][0],
            rtol=1e-5,
            atol=1e-5,
            err_msg=entry["class_name"],
        )


# A model of the new layers trained with fit, on one replica and on MirroredStrategy with 2.
_FIT = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        rng = np.random.default_rng(0)
        seq = rng.standard_normal((16, 6, 4)).astype("float32")
        img = rng.standard_normal((16, 4, 4, 2)).astype("float32")
        y_seq = seq[:, :, :1].mean(axis=(1, 2))[:, None].astype("float32")
        y_img = img.mean(axis=(1, 2, 3))[:, None].astype("float32")
        if len(devices) > 1:
            strategy = tf.distribute.MirroredStrategy(
                devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
        else:
            strategy = tf.distribute.get_strategy()
        with strategy.scope():
            s_in = tf.keras.Input((6, 4), name="seq")
            i_in = tf.keras.Input((4, 4, 2), name="img")
            att = L.MultiHeadAttention(2, 3, name="mha")(s_in, s_in, use_causal_mask=True)
            x = L.LayerNormalization(name="ln")(L.Add(name="res")([s_in, att]))
            x = L.Bidirectional(L.GRU(3, return_sequences=True), name="bi")(x)
            x = L.TimeDistributed(L.Dense(2, activation="tanh"), name="td")(x)
            x = L.Attention(use_scale=True, name="att")([x, x])
            seq_out = L.Dense(1, name="seq_out")(L.GlobalAveragePooling1D()(x))
            z = L.SeparableConv2D(4, 3, padding="same", activation="relu", name="sep")(i_in)
            z = L.Conv2DTranspose(3, 2, strides=2, name="up")(z)
            z = L.DepthwiseConv2D(3, depth_multiplier=2, name="dw")(z)
            z = L.Cropping2D(1, name="crop")(z)
            img_out = L.Dense(1, name="img_out")(L.GlobalAveragePooling2D()(z))
            model = tf.keras.Model([s_in, i_in], [seq_out, img_out])
            if weights is not None:
                model.set_weights(weights)
            start = model.get_weights()
            model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05), loss="mse",
                          run_eagerly=True)
        history = model.fit([seq, img], [y_seq, y_img], batch_size=8, epochs=2, shuffle=False,
                            verbose=0)
        pred = model.predict([seq[:4], img[:4]], verbose=0)
        return {"weights": start, "loss": history.history["loss"],
                "final": model.get_weights(), "pred": list(pred)}
    """
)


def test_fit_of_a_model_of_the_new_layers_matches_tf():
    cases = {f"fit{n}": (_FIT, n) for n in (1, 2)}
    ours = {name: tf_oracle.run_simdist(src, n) for name, (src, n) in cases.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], n) for name, (src, n) in cases.items()}
    )
    assert not failures, failures
    for name in cases:
        tf_oracle.assert_match(name, ours[name], theirs[name], rtol=1e-4, atol=1e-5)


# tf.nn's transposed, depthwise and separable convolutions called directly, TF's way
# (4-element strides and dilations, an output_shape tensor), with their gradients.
_NN_OPS = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        rng = np.random.default_rng(3)
        x = tf.constant(rng.standard_normal((2, 4, 5, 3)).astype("float32"))
        wt = tf.constant(rng.standard_normal((3, 2, 2, 3)).astype("float32"))
        wd = tf.constant(rng.standard_normal((3, 3, 3, 2)).astype("float32"))
        wp = tf.constant(rng.standard_normal((1, 1, 6, 4)).astype("float32"))
        with tf.GradientTape(persistent=True) as tape:
            for t in (x, wt, wd, wp):
                tape.watch(t)
            outs = [
                tf.nn.conv2d_transpose(x, wt, tf.constant([2, 8, 10, 2]), [1, 2, 2, 1]),
                tf.nn.conv2d_transpose(x, wt, [2, 9, 10, 2], 2, padding="VALID"),
                tf.nn.depthwise_conv2d(x, wd, [1, 1, 1, 1], "SAME", dilations=[2, 2]),
                tf.nn.depthwise_conv2d(x, wd, [1, 2, 2, 1], "VALID"),
                tf.nn.separable_conv2d(x, wd, wp, [1, 1, 1, 1], "SAME"),
            ]
            loss = tf.add_n([tf.reduce_sum(o * o) for o in outs])
        grads = tape.gradient(loss, [x, wt, wd, wp])
        return {"out": [o.numpy() for o in outs], "grads": [g.numpy() for g in grads]}
    """
)


def test_nn_ops_match_tf():
    ours = tf_oracle.run_simdist(_NN_OPS)
    theirs, failures = tf_oracle.run_tf({"nn_ops": (_NN_OPS, ours, 1)})
    assert not failures, failures
    tf_oracle.assert_match("nn_ops", ours, theirs["nn_ops"], rtol=1e-5, atol=1e-4)
