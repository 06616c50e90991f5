"""Optimizer use_ema / ema_momentum / ema_overwrite_frequency, alone and under a strategy."""

import numpy as np
import pytest
import tf_oracle

import simdist as tf

RNG = np.random.default_rng(7)
X = RNG.normal(size=(8, 3)).round(3)
Y = RNG.normal(size=(8, 1)).round(3)


def ema_program(tf, make_strategy, payload):
    """fit (which finalizes to the averages) and a custom loop, for SGD and Adam."""
    x = np.array(payload["x"], np.float32)
    y = np.array(payload["y"], np.float32)
    out = {}

    def make_model():
        return tf.keras.Sequential(
            [
                tf.keras.layers.Dense(2, input_shape=(3,), kernel_initializer="ones"),
                tf.keras.layers.Dense(1, kernel_initializer="ones"),
            ]
        )

    for opt_name, lr in (("SGD", 0.1), ("Adam", 0.05)):
        for freq in (None, 3):
            for n in (1, 2):
                strategy = make_strategy(n)
                with strategy.scope():
                    model = make_model()
                    opt = getattr(tf.keras.optimizers, opt_name)(
                        learning_rate=lr,
                        use_ema=True,
                        ema_momentum=0.9,
                        ema_overwrite_frequency=freq,
                    )
                    model.compile(optimizer=opt, loss="mse")
                history = model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
                key = f"fit/{opt_name}/{freq}/{n}"
                out[key + "/loss"] = np.array(history.history["loss"])
                for i, w in enumerate(model.get_weights()):
                    out[key + f"/w{i}"] = w
    # a custom loop: the weights after each step (overwritten every 2nd), then finalized
    strategy = make_strategy(2)
    with strategy.scope():
        model = make_model()
        opt = tf.keras.optimizers.SGD(
            0.2, use_ema=True, ema_momentum=0.5, ema_overwrite_frequency=2
        )

    @tf.function
    def step(xb, yb):
        def replica(xb, yb):
            with tf.GradientTape() as tape:
                per_example = tf.reduce_sum(tf.square(model(xb) - yb), axis=1)
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=8)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))

        strategy.run(replica, args=(xb, yb))

    data = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x, y)).repeat(3).batch(8)
    )
    for i, (xb, yb) in enumerate(data):
        step(xb, yb)
        out[f"loop/step{i}"] = model.get_weights()[0]
    opt.finalize_variable_values(model.trainable_variables)
    for i, w in enumerate(model.get_weights()):
        out[f"loop/final/w{i}"] = w
    out["loop/iterations"] = np.array(opt.iterations.numpy())
    config = opt.get_config()
    out["config"] = np.array(
        [config["use_ema"], config["ema_momentum"], config["ema_overwrite_frequency"]]
    )
    return out


@pytest.mark.tensorflow
def test_ema_matches_tensorflow():
    payload = {"x": X.tolist(), "y": Y.tolist()}
    theirs = tf_oracle.run_tensorflow(__file__, "ema_program", payload)
    ours = tf_oracle.run_simdist(ema_program, payload)
    tf_oracle.assert_same(ours, theirs, rtol=2e-5, atol=2e-6)


def test_the_average_follows_the_rule_and_overwrites_every_k_steps():
    v = tf.Variable([1.0, 2.0])
    opt = tf.keras.optimizers.SGD(1.0, use_ema=True, ema_momentum=0.75, ema_overwrite_frequency=2)
    expected_average = np.array([1.0, 2.0], np.float32)
    value = expected_average.copy()
    for step in range(1, 5):
        opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
        value = value - 1.0
        expected_average = np.float32(0.75) * expected_average + np.float32(0.25) * value
        if step % 2 == 0:
            value = expected_average.copy()
        np.testing.assert_allclose(v.numpy(), value, rtol=1e-6)
    average = dict((name, slot) for _, name, slot in opt._trackable_slots())["average"]
    np.testing.assert_allclose(average.numpy(), expected_average, rtol=1e-6)
    assert any(x is average for x in opt.variables)


def test_finalize_and_the_errors(tmp_path):
    v, other = tf.Variable(3.0), tf.Variable(1.0)
    opt = tf.keras.optimizers.Adam(0.1, use_ema=True)
    opt.apply_gradients([(tf.constant(1.0), v)])
    average = float(opt._averages[v.ref()].numpy())
    opt.finalize_variable_values([v])
    assert float(v.numpy()) == average
    with pytest.raises(ValueError, match="no moving average of variable"):
        opt.finalize_variable_values([other])
    with pytest.raises(ValueError, match="ema_momentum"):
        tf.keras.optimizers.SGD(use_ema=True, ema_momentum=1.5)
    with pytest.raises(ValueError, match="ema_overwrite_frequency"):
        tf.keras.optimizers.SGD(use_ema=True, ema_overwrite_frequency=0.5)
    plain = tf.keras.optimizers.SGD(0.1)
    plain.apply_gradients([(tf.constant(1.0), other)])
    plain.finalize_variable_values([other])  # nothing to do without use_ema
    assert float(other.numpy()) == pytest.approx(0.9)
    # the average is checkpointed with the optimizer
    path = tf.train.Checkpoint(v=v, opt=opt).save(str(tmp_path / "ckpt"))
    v2, opt2 = tf.Variable(0.0), tf.keras.optimizers.Adam(0.1, use_ema=True)
    tf.train.Checkpoint(v=v2, opt=opt2).restore(path)
    opt2.build([v2])
    assert float(opt2._averages[v2.ref()].numpy()) == average
