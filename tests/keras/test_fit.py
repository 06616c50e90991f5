"""Model.compile/fit/evaluate/predict under the default, OneDevice and Mirrored strategies."""

import re

import numpy as np
import pytest

import simdist as tf

FINAL_LINE = re.compile(r"^\d+/\d+ \[=+\] - \d+s \d+(ms|us|s)/step - loss: \d+\.\d{4}$")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(48, 3)).astype("float32")
Y = (X @ np.array([[1.0], [2.0], [-1.0]], "float32") + 0.5).astype("float32")
INIT = [
    RNG.normal(size=(3, 4)).astype("float32"),
    np.zeros(4, "float32"),
    RNG.normal(size=(4, 1)).astype("float32"),
    np.zeros(1, "float32"),
]


def _strategy(kind, n=1):
    if kind == "default":
        return tf.distribute.get_strategy()
    if kind == "one":
        return tf.distribute.OneDeviceStrategy("GPU:0")
    return tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(n)])


def _model(strategy, lr=0.05):
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                tf.keras.layers.Dense(1),
            ]
        )
        model.set_weights(INIT)
    model.compile(optimizer="sgd", loss="mse")
    model.optimizer.learning_rate = lr
    return model


def _final_lines(text):
    return [chunk.split("\r")[-1] for chunk in text.split("\n") if chunk]


def test_guide_example_verbatim(capsys):
    mirrored_strategy = tf.distribute.MirroredStrategy()
    with mirrored_strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    model.compile(loss="mse", optimizer="sgd")
    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(100).batch(10)
    history = model.fit(dataset, epochs=2)
    result = model.evaluate(dataset)
    lines = _final_lines(capsys.readouterr().out)
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2"
    for line in (lines[1], lines[3], lines[4]):
        assert FINAL_LINE.match(line), line
    assert history.history["loss"][1] < history.history["loss"][0]
    assert isinstance(result, float)
    inputs, targets = np.ones((100, 1)), np.ones((100, 1))
    h2 = model.fit(inputs, targets, epochs=2, batch_size=10)
    assert len(h2.history["loss"]) == 2 and h2.history["loss"][1] < h2.history["loss"][0]


def _custom_loop(strategy, epochs, batch_size, lr=0.05):
    """A hand-written loop: the same batches (no shuffle), loss over the global batch."""
    model = _model(strategy, lr)
    optimizer = model.optimizer
    dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(batch_size)
    dist = strategy.experimental_distribute_dataset(dataset)
    loss_fn = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)

    def step(x, y, global_batch):
        with tf.GradientTape() as tape:
            per_example = loss_fn(y, model(x, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    for _ in range(epochs):
        for start, (x, y) in zip(range(0, len(X), batch_size), dist, strict=True):
            n = min(batch_size, len(X) - start)
            strategy.run(step, args=(x, y, n))
    return model


@pytest.mark.strategies(
    "default", "one_device", "mirrored_one_gpu", "mirrored_two_gpus", "mirrored_four_gpus"
)
def test_fit_matches_custom_loop(make_distribution):
    model = _model(make_distribution())
    model.fit(X, Y, batch_size=20, epochs=3, shuffle=False, verbose=0)
    reference = _custom_loop(make_distribution(), 3, 20)
    for a, b in zip(model.get_weights(), reference.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_replica_counts_agree_and_evaluate_predict():
    results = []
    for n in (1, 2, 4):
        model = _model(_strategy("mirrored", n))
        history = model.fit(X, Y, batch_size=16, epochs=2, verbose=0)
        loss = model.evaluate(X, Y, batch_size=16, verbose=0)
        pred = model.predict(X, batch_size=16, verbose=0)
        results.append((model.get_weights(), history.history["loss"], loss, pred))
    base = results[0]
    for weights, losses, loss, pred in results[1:]:
        for a, b in zip(weights, base[0], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(losses, base[1], rtol=1e-5)
        np.testing.assert_allclose(loss, base[2], rtol=1e-5)
        np.testing.assert_allclose(pred, base[3], rtol=1e-5, atol=1e-6)
    weights, _, loss, pred = base
    assert pred.shape == (48, 1)
    h = np.maximum(X @ weights[0] + weights[1], 0)
    expected = h @ weights[2] + weights[3]
    np.testing.assert_allclose(pred, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(loss, np.mean((expected - Y) ** 2), rtol=1e-4)


def test_metrics_accuracy_and_return_forms():
    strategy = _strategy("mirrored", 2)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(2,))])
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    x = RNG.normal(size=(30, 2)).astype("float32")
    y = (x[:, 0] > 0).astype("int64")
    history = model.fit(x, y, epochs=2, batch_size=10, verbose=0, validation_data=(x, y))
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    loss, acc = model.evaluate(x, y, verbose=0)
    pred = model.predict(x, verbose=0)
    logits_loss = tf.keras.losses.sparse_categorical_crossentropy(y, pred)
    np.testing.assert_allclose(loss, np.mean(logits_loss.numpy()), rtol=1e-5)
    np.testing.assert_allclose(acc, np.mean(np.argmax(pred, -1) == y), rtol=1e-6)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == ["loss", "accuracy"]
    assert model.metrics_names == ["loss", "accuracy"]


def test_train_on_batch_and_test_on_batch():
    model = _model(_strategy("mirrored", 2))
    before = model.test_on_batch(X[:8], Y[:8])
    first = model.train_on_batch(X[:8], Y[:8])
    assert first == pytest.approx(before, rel=1e-6)
    after = model.test_on_batch(X[:8], Y[:8])
    assert after < before


def test_verbose_formats(capsys):
    model = _model(_strategy("default"))
    model.fit(X, Y, batch_size=16, epochs=1, verbose=0)
    assert capsys.readouterr().out == ""
    model.fit(X, Y, batch_size=16, epochs=2, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Epoch 1/2"
    assert re.match(
        r"^3/3 - \d+s - loss: \d+\.\d{4} - \d+m?s/epoch - \d+(ms|us|s)/step$", lines[1]
    ), lines[1]
    model.fit(X, Y, batch_size=16, epochs=1, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch" not in out
    assert FINAL_LINE.match(_final_lines(out)[-1])
    model.predict(X, verbose=1)
    last = _final_lines(capsys.readouterr().out)[-1]
    assert re.match(r"^2/2 \[=+\] - \d+s \d+(ms|us|s)/step$", last)


def test_summary(capsys):
    model = _model(_strategy("default"))
    model.summary()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith('Model: "sequential')
    assert lines[2].rstrip() == " Layer (type)                Output Shape              Param #"
    assert "(None, 4)                 16" in lines[4]
    assert "Total params: 21" in lines and "Trainable params: 21" in lines
    assert "Non-trainable params: 0" in lines


def test_errors():
    with tf.distribute.get_strategy().scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(1,))])
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(np.ones((4, 1)), np.ones((4, 1)))
    with pytest.raises(ValueError, match="optimizer"):
        model.compile(optimizer="nope", loss="mse")
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="infinite"):
        model.fit(tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat())


@pytest.mark.strategies("default", "mirrored_two_gpus")
def test_fit_builds_a_model_without_an_input_shape(distribution):
    # Keras builds such a model on its first call, inside the first train step; the step
    # must take the trainable variables after that call (there are none before it).
    strategy = distribution
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(4, "relu"), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(X, Y, batch_size=8, epochs=2, verbose=0)
    assert len(model.trainable_variables) == 4
    assert history.history["loss"][1] < history.history["loss"][0]
