"""Mirrored copies are updated once and shared: bit-identical to updating each copy."""

import numpy as np
import pytest

import simdist as tf
from simdist.keras.optimizers import optimizer as optimizer_lib


def _train(make_optimizer, diverge: bool, steps: int = 3) -> list[bytes]:
    tf.random.set_seed(0)
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1", "GPU:2"])
    with strategy.scope():
        w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        optimizer = make_optimizer()
    if diverge:  # a copy written on its own: it must be updated from its own value
        w.values[1].assign(w.values[1].numpy() + np.float32(0.25))

    def step(scale):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w) * scale
        grads = tape.gradient(loss, [w])
        optimizer.apply_gradients(zip(grads, [w], strict=True))

    for i in range(steps):
        strategy.run(step, args=(tf.constant(np.float32(i + 1)),))
    out = [c.numpy().tobytes() for c in w.values]
    for slot in optimizer.variables[1:]:
        out += [c.numpy().tobytes() for c in slot.values]
    return out


@pytest.mark.parametrize(
    "make_optimizer",
    [
        lambda: tf.keras.optimizers.Adam(0.1),
        lambda: tf.keras.optimizers.Adam(0.1, amsgrad=True),
        lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    ],
)
@pytest.mark.parametrize("diverge", [False, True])
def test_update_once_matches_updating_every_copy(monkeypatch, make_optimizer, diverge):
    fast = _train(make_optimizer, diverge)
    monkeypatch.setattr(optimizer_lib, "_update_once", lambda *args: False)
    slow = _train(make_optimizer, diverge)
    assert fast == slow
    if diverge:  # the copies really differ, so the per-copy path was taken
        assert fast[0] != fast[1]
