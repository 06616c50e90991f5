"""Optimizers: SGD and Adam against hand-computed updates, the update loop's rules, schedules."""

import numpy as np
import pytest

import simdist as tf
from simdist import keras
from simdist.keras.optimizers import schedules

W0 = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
B0 = np.array([0.1, -0.2], np.float32)
GRADS = [  # gradients of three steps, for (w, b)
    (np.array([[0.1, -0.2], [0.3, 0.0]]), np.array([1.0, -1.0])),
    (np.array([[-0.5, 0.4], [0.1, 0.2]]), np.array([0.5, 0.25])),
    (np.array([[0.05, 0.05], [-0.3, 1.0]]), np.array([-2.0, 0.0])),
]


def _run(optimizer, steps=3):
    w, b = tf.Variable(W0, name="w"), tf.Variable(B0, name="b")
    for gw, gb in GRADS[:steps]:
        optimizer.apply_gradients(
            [(tf.constant(gw.astype(np.float32)), w), (tf.constant(gb.astype(np.float32)), b)]
        )
    return w, b


def _sgd_reference(lr, momentum, nesterov):
    params = [W0.astype(np.float64), B0.astype(np.float64)]
    velocity = [np.zeros_like(p) for p in params]
    for grads in GRADS:
        for i, g in enumerate(grads):
            if momentum == 0:
                params[i] = params[i] - lr * g
                continue
            velocity[i] = momentum * velocity[i] - lr * g
            step = momentum * velocity[i] - lr * g if nesterov else velocity[i]
            params[i] = params[i] + step
    return params


def _adam_reference(lr, b1, b2, eps, amsgrad=False):
    params = [W0.astype(np.float64), B0.astype(np.float64)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    vhat = [np.zeros_like(p) for p in params]
    for t, grads in enumerate(GRADS, start=1):
        lr_t = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            denom_v = v[i]
            if amsgrad:
                vhat[i] = np.maximum(vhat[i], v[i])
                denom_v = vhat[i]
            params[i] = params[i] - lr_t * m[i] / (np.sqrt(denom_v) + eps)
    return params


@pytest.mark.parametrize(
    "momentum,nesterov", [(0.0, False), (0.9, False), (0.9, True), (0.5, True)]
)
def test_sgd_matches_hand_computed_updates(momentum, nesterov):
    opt = keras.optimizers.SGD(learning_rate=0.1, momentum=momentum, nesterov=nesterov)
    w, b = _run(opt)
    want_w, want_b = _sgd_reference(0.1, momentum, nesterov)
    np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-6, atol=1e-7)
    assert w.dtype == tf.float32 and w.numpy().dtype == np.float32
    assert opt.get_slot_names() == (["momentum"] if momentum else [])


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_matches_hand_computed_updates(amsgrad):
    opt = keras.optimizers.Adam(learning_rate=0.01, amsgrad=amsgrad)
    w, b = _run(opt)
    want_w, want_b = _adam_reference(0.01, 0.9, 0.999, 1e-7, amsgrad)
    np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-5, atol=1e-7)
    assert opt.iterations.dtype == tf.int64 and int(opt.iterations.numpy()) == 3
    assert w.numpy().dtype == np.float32


def test_defaults_follow_keras():
    sgd, adam = keras.optimizers.SGD(), keras.optimizers.Adam()
    assert np.isclose(float(sgd.learning_rate.numpy()), 0.01)
    assert (sgd.momentum, sgd.nesterov) == (0.0, False)
    assert np.isclose(float(adam.learning_rate.numpy()), 0.001)
    assert (adam.beta_1, adam.beta_2, adam.epsilon, adam.amsgrad) == (0.9, 0.999, 1e-7, False)


def test_slots_are_lazy_per_variable_and_listed_in_variables():
    opt = keras.optimizers.Adam()
    assert [v.name for v in opt.variables()] == ["iteration:0"]
    w, _ = _run(opt, steps=1)
    assert [v.name for v in opt.variables] == [
        "iteration:0",
        "Adam/w/m:0",
        "Adam/w/v:0",
        "Adam/b/m:0",
        "Adam/b/v:0",
    ]
    assert opt.get_slot(w, "m").shape == w.shape
    with pytest.raises(KeyError, match="No slot"):
        opt.get_slot(tf.Variable(1.0), "m")


def test_none_gradients_warn_and_all_none_raise():
    opt = keras.optimizers.SGD(0.1)
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['b:0'\]"):
        opt.apply_gradients([(tf.constant(1.0), a), (None, b)])
    assert np.isclose(a.numpy(), 0.9) and b.numpy() == 2.0
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, a), (None, b)])


def test_minimize_with_callable_and_with_tape():
    w = tf.Variable(3.0)
    opt = keras.optimizers.SGD(learning_rate=0.25)
    opt.minimize(lambda: w * w, [w])  # d/dw = 6
    assert np.isclose(w.numpy(), 3.0 - 0.25 * 6)
    with tf.GradientTape() as tape:
        loss = w * 2.0
    opt.minimize(loss, [w], tape=tape)
    assert np.isclose(w.numpy(), 1.5 - 0.5)
    with pytest.raises(ValueError, match="`tape` is required"):
        opt.minimize(loss, [w])


def test_clipping():
    g = np.array([3.0, 4.0], np.float32)  # norm 5
    for kwargs, want in [
        ({"clipnorm": 1.0}, g / 5),
        ({"clipvalue": 3.5}, [3.0, 3.5]),
        ({"global_clipnorm": 2.5}, g / 2),
    ]:
        v = tf.Variable([0.0, 0.0])
        keras.optimizers.SGD(learning_rate=1.0, **kwargs).apply_gradients([(g, v)])
        np.testing.assert_allclose(-v.numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="At most one of `clipnorm` and `global_clipnorm`"):
        keras.optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0)


def test_global_clipnorm_scales_all_gradients_together():
    v1, v2 = tf.Variable([0.0]), tf.Variable([0.0])
    opt = keras.optimizers.SGD(learning_rate=1.0, global_clipnorm=1.0)
    opt.apply_gradients([(np.array([3.0], np.float32), v1), (np.array([4.0], np.float32), v2)])
    np.testing.assert_allclose([v1.numpy()[0], v2.numpy()[0]], [-0.6, -0.8], rtol=1e-6)


def test_learning_rate_setter_callable_and_schedule():
    opt = keras.optimizers.SGD(learning_rate=0.1)
    opt.learning_rate = 0.5
    assert np.isclose(float(opt.learning_rate.numpy()), 0.5)
    v = tf.Variable(0.0)
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert np.isclose(v.numpy(), -0.5)
    lr = schedules.PiecewiseConstantDecay([1], [1.0, 0.1])
    opt = keras.optimizers.SGD(learning_rate=lr)
    v = tf.Variable(0.0)
    for _ in range(3):  # steps 0 and 1 use 1.0, step 2 uses 0.1
        opt.apply_gradients([(tf.constant(1.0), v)])
    assert np.isclose(v.numpy(), -2.1)
    opt = keras.optimizers.SGD(learning_rate=lambda: 0.25)
    v = tf.Variable(0.0)
    opt.apply_gradients([(tf.constant(1.0), v)])
    assert np.isclose(v.numpy(), -0.25)


def test_exponential_decay():
    smooth = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    stairs = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    assert np.isclose(float(smooth(5)), 0.1 * 0.5**0.5)
    assert np.isclose(float(stairs(15)), 0.05)
    assert smooth(0).dtype == tf.float32
    rebuilt = schedules.deserialize(schedules.serialize(stairs))
    assert np.isclose(float(rebuilt(25)), 0.025)


def test_piecewise_constant_boundaries_are_inclusive():
    lr = schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    assert [float(lr(s)) for s in (0, 10, 11, 20, 21)] == [1.0, 1.0, 0.5, 0.5, np.float32(0.1)]
    with pytest.raises(ValueError, match="1 less than the length of values"):
        schedules.PiecewiseConstantDecay([1, 2], [1.0])


def test_get_and_config_round_trip():
    assert isinstance(keras.optimizers.get("adam"), keras.optimizers.Adam)
    opt = keras.optimizers.SGD(learning_rate=0.3, momentum=0.5, nesterov=True)
    clone = keras.optimizers.SGD.from_config(opt.get_config())
    assert (clone.momentum, clone.nesterov) == (0.5, True)
    assert np.isclose(float(clone.learning_rate.numpy()), 0.3)
    with pytest.raises(ValueError, match="Could not interpret optimizer"):
        keras.optimizers.get("rmsprop_deluxe")
    with pytest.raises(ValueError, match="momentum"):
        keras.optimizers.SGD(momentum=1.5)


def test_float64_variables_update_in_float64():
    v = tf.Variable(np.array([1.0], np.float64))
    keras.optimizers.Adam(0.1).apply_gradients([(tf.constant(np.array([0.5])), v)])
    assert v.dtype == tf.float64
    lr = float(np.float32(0.1))  # the learning rate lives in a float32 variable, as in Keras
    root_v = np.sqrt(0.001 * 0.25)
    step = lr * np.sqrt(0.001) / 0.1 * 0.05 / (root_v + 1e-7)
    np.testing.assert_allclose(v.numpy(), [1.0 - step], rtol=1e-12)
