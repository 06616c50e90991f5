"""``tf.keras.optimizers.legacy``: OptimizerV2's arguments, decay, clip order and configs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf

legacy = tf.keras.optimizers.legacy


@given(
    lr=st.floats(0.01, 1.0),
    decay=st.floats(0.0, 2.0),
    grads=st.lists(st.floats(-3, 3), min_size=1, max_size=6),
)
def test_sgd_decay_against_the_formula(lr, decay, grads):
    var = tf.Variable(1.0)
    opt = legacy.SGD(learning_rate=lr, decay=decay)
    expected = np.float32(1.0)
    for t, g in enumerate(grads):
        opt.apply_gradients([(tf.constant(g), var)])
        step_lr = np.float32(lr) / (np.float32(1.0) + np.float32(decay) * np.float32(t))
        expected = expected - np.float32(step_lr) * np.float32(g)
    np.testing.assert_allclose(var.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_clipvalue_then_clipnorm():
    var = tf.Variable([0.0, 0.0])
    opt = legacy.SGD(learning_rate=1.0, clipvalue=3.0, clipnorm=1.0)
    opt.apply_gradients([(tf.constant([4.0, 0.0]), var)])
    # clipvalue makes [3, 0], then clipnorm scales it to norm 1 (the new SGD would only clip
    # by norm: the same here; with [4, 3] the orders differ)
    np.testing.assert_allclose(var.numpy(), [-1.0, 0.0], rtol=1e-6)
    var.assign([0.0, 0.0])
    opt.apply_gradients([(tf.constant([4.0, 3.0]), var)])
    np.testing.assert_allclose(var.numpy(), -np.array([3.0, 3.0]) / np.hypot(3, 3), rtol=1e-6)


def test_optimizer_v2_arguments():
    with pytest.raises(TypeError, match="Unexpected keyword argument passed to optimizer"):
        legacy.Adam(weight_decay=0.1)
    with pytest.raises(ValueError, match="Cannot accept both"):
        legacy.SGD(clipnorm=1.0, global_clipnorm=1.0)
    assert isinstance(legacy.Adam(), legacy.Optimizer)
    assert legacy.Nadam(decay=0.5).decay == 0.004  # as TF: schedule_decay replaces it


def test_config_round_trip():
    opt = legacy.RMSprop(learning_rate=0.5, momentum=0.25, decay=0.1, clipvalue=2.0)
    config = opt.get_config()
    assert config == {
        "name": "RMSprop",
        "learning_rate": 0.5,
        "decay": 0.1,
        "rho": 0.9,
        "momentum": 0.25,
        "epsilon": 1e-07,
        "centered": False,
        "clipvalue": 2.0,
    }
    again = legacy.RMSprop.from_config(config)
    assert again.get_config() == config and type(again) is legacy.RMSprop


def test_rmsprop_epsilon_outside_the_root_without_momentum():
    var = tf.Variable([1.0])
    legacy.RMSprop(learning_rate=1.0, rho=0.0, epsilon=1.0).apply_gradients(
        [(tf.constant([3.0]), var)]
    )
    np.testing.assert_allclose(var.numpy(), [1.0 - 3.0 / (3.0 + 1.0)], rtol=1e-6)
