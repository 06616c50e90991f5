"""Keras masks: Embedding(mask_zero), Masking, propagation to RNNs, losses and metrics."""

import numpy as np
import pytest
import tf_oracle

import simdist as tf

X = [[1, 2, 0, 0, 0], [3, 4, 5, 0, 0], [2, 0, 3, 1, 0], [5, 5, 5, 5, 5]]
Y = [[0, 1, 2, 0, 1], [2, 2, 1, 0, 0], [1, 0, 2, 1, 2], [0, 1, 2, 1, 0]]


def masking_program(tf, make_strategy, payload):
    """Sequence models with masks: outputs, masks, loss, metric, gradients, a fit step."""
    x = np.array(payload["x"], np.int32)
    y = np.array(payload["y"], np.int32)
    rng = np.random.default_rng(0)
    out = {}

    def weights_for(model):
        return [rng.uniform(-0.6, 0.6, w.shape).astype(np.float32) for w in model.get_weights()]

    for rnn_name in ("SimpleRNN", "LSTM", "GRU"):
        rnn = getattr(tf.keras.layers, rnn_name)

        def build(rnn=rnn):
            return tf.keras.Sequential(
                [
                    tf.keras.layers.Embedding(6, 3, mask_zero=True, input_length=5),
                    rnn(4, return_sequences=True),
                    tf.keras.layers.Dense(3),
                ]
            )

        model = build()
        model.build((None, 5))
        initial = weights_for(model)
        model.set_weights(initial)
        logits = model(x)
        out[f"{rnn_name}/logits"] = logits.numpy()
        out[f"{rnn_name}/mask"] = logits._keras_mask.numpy()
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        out[f"{rnn_name}/loss_object"] = loss.numpy()
        for i, g in enumerate(grads):
            out[f"{rnn_name}/grad{i}"] = tf.convert_to_tensor(g).numpy()
        if rnn_name != "LSTM":
            continue
        for n in (2,):  # the compiled loss under a strategy: each replica's valid steps
            strategy = make_strategy(n)
            with strategy.scope():
                model = build()
                model.build((None, 5))
                model.set_weights(initial)
                model.compile(
                    optimizer=tf.keras.optimizers.SGD(0.5),
                    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                    metrics=["sparse_categorical_accuracy"],
                )
            # one step on the 4 sequences: its loss and metric are the initial weights'
            history = model.fit(x, y, batch_size=4, epochs=1, verbose=0, shuffle=False)
            out[f"{rnn_name}/fit_loss{n}"] = np.array(history.history["loss"])
            accuracy = history.history["sparse_categorical_accuracy"]
            out[f"{rnn_name}/fit_accuracy{n}"] = np.array(accuracy)
            for i, w in enumerate(model.get_weights()):
                out[f"{rnn_name}/fit{n}_w{i}"] = w

    # Functional: Masking -> GRU (backwards, states) and pooling; merges of masked tensors
    features = np.array(payload["features"], np.float32)
    inputs = tf.keras.Input((4, 2))
    masked = tf.keras.layers.Masking(mask_value=0.0)(inputs)
    seq, state = tf.keras.layers.GRU(
        3, return_sequences=True, return_state=True, go_backwards=True
    )(masked)
    pooled = tf.keras.layers.GlobalAveragePooling1D()(seq)
    dense = tf.keras.layers.Dense(3, activation="tanh")(masked)
    added = tf.keras.layers.Add()([seq, dense])
    joined = tf.keras.layers.Concatenate()([seq, dense])
    last = tf.keras.layers.LSTM(2)(joined)
    model = tf.keras.Model(inputs, [pooled, state, added, last])
    model.set_weights(weights_for(model))
    pooled_v, state_v, added_v, last_v = model(features)
    out["func/pooled"] = pooled_v.numpy()
    out["func/state"] = state_v.numpy()
    out["func/added"] = added_v.numpy()
    out["func/added_mask"] = added_v._keras_mask.numpy()
    out["func/last"] = last_v.numpy()
    out["func/last_has_mask"] = np.array(getattr(last_v, "_keras_mask", None) is not None)
    out["func/masking_out"] = tf.keras.layers.Masking()(features).numpy()
    # batch statistics of the unmasked steps only
    norm = tf.keras.layers.BatchNormalization(momentum=0.5)
    normalized = norm(tf.keras.layers.Masking()(features), training=True)
    out["bn/out"] = normalized.numpy()
    out["bn/moving"] = np.stack([norm.moving_mean.numpy(), norm.moving_variance.numpy()])
    out["bn/keeps_mask"] = np.array(normalized._keras_mask.numpy())
    # a metric object weighted by the mask as compile does (sample_weight = mask)
    metric = tf.keras.metrics.MeanSquaredError()
    metric.update_state(np.ones((2, 4, 3), np.float32), added_v)
    out["func/metric_unmasked"] = metric.result().numpy()
    return out


def _payload():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(2, 4, 2)).round(3)
    features[0, 2:] = 0.0  # padded steps
    features[1, 1] = 0.0
    return {"x": X, "y": Y, "features": features.tolist()}


@pytest.mark.tensorflow
def test_masked_sequence_models_match_tensorflow():
    payload = _payload()
    theirs = tf_oracle.run_tensorflow(__file__, "masking_program", payload)
    ours = tf_oracle.run_simdist(masking_program, payload)
    tf_oracle.assert_same(ours, theirs, rtol=2e-5, atol=2e-6)


def test_masked_steps_carry_the_state_and_do_not_count():
    x = np.array([[1, 2, 0], [3, 0, 0]])
    emb = tf.keras.layers.Embedding(4, 2, mask_zero=True)
    rnn = tf.keras.layers.SimpleRNN(2, return_sequences=True)
    seq = rnn(emb(x))
    np.testing.assert_array_equal(seq.numpy()[0, 2], seq.numpy()[0, 1])
    np.testing.assert_array_equal(seq.numpy()[1, 1], seq.numpy()[1, 0])
    np.testing.assert_array_equal(seq._keras_mask.numpy(), x != 0)
    last = tf.keras.layers.SimpleRNN(2)(emb(x))
    assert getattr(last, "_keras_mask", None) is None
    # a loss object averages over the unmasked elements only: 3 of the 6
    logits = tf.keras.layers.Dense(3)(seq)
    per_element = tf.keras.losses.sparse_categorical_crossentropy(
        np.zeros((2, 3)), logits, from_logits=True
    ).numpy()
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)(np.zeros((2, 3)), logits)
    np.testing.assert_allclose(loss.numpy(), per_element[x != 0].mean(), rtol=1e-6)


def test_explicit_mask_and_the_errors():
    rnn = tf.keras.layers.LSTM(2, return_sequences=True)
    values = tf.ones((2, 3, 1))
    mask = tf.constant([[True, False, True], [True, True, True]])
    out = rnn(values, mask=mask)
    np.testing.assert_array_equal(out.numpy()[0, 1], out.numpy()[0, 0])
    assert out._keras_mask is mask
    with pytest.raises(ValueError, match="mask must have shape"):
        rnn(values, mask=tf.constant([True, False]))
    flatten = tf.keras.layers.Flatten()
    assert not flatten.supports_masking
    with pytest.raises(TypeError, match="does not support masking"):
        flatten.compute_mask(values, mask)
    flat = flatten(tf.keras.layers.Masking()(values))  # a layer without masking drops it
    assert getattr(flat, "_keras_mask", None) is None
    emb = tf.keras.layers.Embedding(3, 2)
    assert not emb.supports_masking and emb.compute_mask(np.array([[0, 1]])) is None
    assert tf.keras.layers.Embedding(3, 2, mask_zero=True).get_config()["mask_zero"] is True
    assert tf.keras.layers.Dense(2).supports_masking


def test_compiled_loss_under_a_strategy_is_the_mean_over_each_replicas_valid_steps():
    x, y = np.array(X), np.array(Y)
    strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with strategy.scope():
        model = tf.keras.Sequential(
            [tf.keras.layers.Embedding(6, 3, mask_zero=True), tf.keras.layers.Dense(3)]
        )
        model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    loss = model.evaluate(x, y, batch_size=4, verbose=0)
    logits = model(x)
    per_element = tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True)
    per_element, keep = per_element.numpy(), x != 0
    halves = [per_element[r : r + 2][keep[r : r + 2]].mean() for r in (0, 2)]
    np.testing.assert_allclose(loss, np.mean(halves), rtol=1e-5)
