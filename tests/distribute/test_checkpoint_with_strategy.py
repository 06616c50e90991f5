"""A checkpoint saved under a strategy restores with or without one (custom-training seed)."""

import numpy as np
import pytest

import simdist as tf


def model_and_optimizer():
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(2)]
    )
    return model, tf.keras.optimizers.Adam()


def trained_checkpoint(tmp_path, devices):
    tf.random.set_seed(0)
    strategy = tf.distribute.MirroredStrategy(devices)
    with strategy.scope():
        model, optimizer = model_and_optimizer()
        model.build((None, 3))
        checkpoint = tf.train.Checkpoint(optimizer=optimizer, model=model)
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)

    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(
                tf.reduce_sum(model(x) ** 2, axis=1), global_batch_size=4
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))

    for _ in range(2):
        strategy.run(step, args=(x,))
    path = checkpoint.save(str(tmp_path / "ckpt"))
    return path, model, optimizer, x


@pytest.mark.parametrize("restore_devices", [None, ["GPU:0", "GPU:1", "GPU:2"]])
def test_restore_with_or_without_a_strategy(tmp_path, restore_devices):
    path, model, optimizer, x = trained_checkpoint(tmp_path, ["GPU:0", "GPU:1"])
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    if restore_devices is None:
        new_model, new_optimizer = model_and_optimizer()
    else:
        with tf.distribute.MirroredStrategy(restore_devices).scope():
            new_model, new_optimizer = model_and_optimizer()
            new_model.build((None, 3))
    status = tf.train.Checkpoint(optimizer=new_optimizer, model=new_model).restore(path)
    np.testing.assert_array_equal(new_model(x).numpy(), model(x).numpy())
    for var in new_model.trainable_variables:  # every copy got the saved value
        for component in getattr(var, "values", (var,)):
            np.testing.assert_array_equal(component.numpy(), var.numpy())
    assert int(new_optimizer.iterations.numpy()) == 2
    new_optimizer.build(new_model.trainable_variables)  # slots restored when created
    status.assert_consumed()
    slot = new_optimizer.get_slot(new_model.trainable_variables[0], "m")
    if restore_devices is not None:  # created outside the scope, yet mirrored like its variable
        assert type(slot).__name__ == "MirroredVariable" and len(slot.values) == 3
    np.testing.assert_array_equal(
        slot.numpy(), optimizer.get_slot(model.trainable_variables[0], "m").numpy()
    )
