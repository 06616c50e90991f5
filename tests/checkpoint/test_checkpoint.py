"""Checkpoint: save/restore round trips, the save counter, write vs save, the status object."""

import os
import threading

import numpy as np
import pytest
from ckpt_helpers import FakeMirrored, batch, make_cnn, slots, train_steps, weights

import simdist as tf
from simdist import errors, train
from simdist.checkpoint import format as ckpt_format


def _fresh():
    return make_cnn(), tf.keras.optimizers.Adam(learning_rate=0.01)


def test_round_trip_restores_weights_slots_and_iterations(trained):
    model, optimizer, checkpoint, directory = trained
    path = checkpoint.save(os.path.join(directory, "ckpt"))
    new_model, new_optimizer = _fresh()
    new_model(batch()[0])  # built, different random weights
    status = train.Checkpoint(optimizer=new_optimizer, model=new_model).restore(path)
    for got, want in zip(weights(new_model), weights(model), strict=True):
        np.testing.assert_array_equal(got, want)
    assert int(new_optimizer.iterations.numpy()) == 3
    new_optimizer.build(new_model.trainable_variables)  # slots created now: deferred restore
    for got, want in zip(slots(new_optimizer, new_model), slots(optimizer, model), strict=True):
        np.testing.assert_array_equal(got, want)
    status.assert_consumed()
    # Training on from the restored state gives exactly what training on the original gives.
    train_steps(model, optimizer, steps=2, seed=10)
    train_steps(new_model, new_optimizer, steps=2, seed=10)
    for got, want in zip(weights(new_model), weights(model), strict=True):
        np.testing.assert_array_equal(got, want)


def test_restore_into_unbuilt_model_is_deferred_until_first_call(trained):
    # The tutorial's flow: a new model and optimizer, restored before the model is built.
    model, _, checkpoint, directory = trained
    checkpoint.save(os.path.join(directory, "ckpt"))
    new_model, new_optimizer = _fresh()
    ckpt = train.Checkpoint(optimizer=new_optimizer, model=new_model)
    status = ckpt.restore(train.latest_checkpoint(directory))
    assert not new_model.built
    images = batch(seed=7)[0]
    np.testing.assert_array_equal(np.array(new_model(images)), np.array(model(images)))
    status.assert_existing_objects_matched()
    with pytest.raises(AssertionError, match="OPTIMIZER_SLOT"):
        status.assert_consumed()  # the new optimizer has no slots yet
    assert "_maybe_build" not in vars(new_model)  # the build hook is gone once used


def test_deferred_restore_of_subclassed_model(tmp_path):
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(5, activation="relu")
            self.out = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.out(self.hidden(x))

    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    net = Net()
    want = np.array(net(x))
    path = train.Checkpoint(net=net).write(str(tmp_path / "net"))
    assert ("net/hidden/kernel/.ATTRIBUTES/VARIABLE_VALUE", [4, 5]) in train.list_variables(path)
    other = Net()
    status = train.Checkpoint(net=other).restore(path)
    np.testing.assert_array_equal(np.array(other(x)), want)
    status.assert_consumed()


def test_save_counter_numbers_the_checkpoints(tmp_path):
    v = tf.Variable(1.0)
    ckpt = train.Checkpoint(v=v)
    prefix = str(tmp_path / "ckpt")
    assert ckpt.save(prefix) == prefix + "-1"
    v.assign(2.0)
    assert ckpt.save(prefix) == prefix + "-2"
    assert int(ckpt.save_counter.numpy()) == 2
    # A new Checkpoint restored from ckpt-2 continues the numbering.
    other = train.Checkpoint(v=tf.Variable(0.0))
    other.restore(prefix + "-2").assert_consumed()
    assert float(other.v.numpy()) == 2.0
    assert other.save(prefix) == prefix + "-3"


def test_latest_checkpoint_picks_the_newest(tmp_path):
    assert train.latest_checkpoint(str(tmp_path)) is None
    assert train.latest_checkpoint(str(tmp_path / "missing")) is None
    v = tf.Variable(0)
    ckpt = train.Checkpoint(v=v)
    for value in (1, 2, 3):
        v.assign(value)
        ckpt.save(str(tmp_path / "ckpt"))
    latest = train.latest_checkpoint(str(tmp_path))
    assert latest == str(tmp_path / "ckpt-3")
    v.assign(0)
    ckpt.restore(latest)
    assert int(v.numpy()) == 3
    state = train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "ckpt-1",
        "ckpt-2",
        "ckpt-3",
    ]


def test_latest_checkpoint_is_none_when_its_files_are_gone(tmp_path):
    path = train.Checkpoint(v=tf.Variable(1)).save(str(tmp_path / "ckpt"))
    os.remove(path + ".index")
    assert train.latest_checkpoint(str(tmp_path)) is None


def test_write_uses_the_exact_prefix_and_no_state_file(tmp_path):
    v = tf.Variable([1.0, 2.0])
    ckpt = train.Checkpoint(v=v)
    path = ckpt.write(str(tmp_path / "sub" / "exact"))
    assert path == str(tmp_path / "sub" / "exact")
    assert sorted(os.listdir(tmp_path / "sub")) == [
        os.path.basename(ckpt_format.data_files(path)[0]),
        "exact.index",
    ]
    assert ckpt_format.data_files(path)[0].endswith(".npz")
    assert train.latest_checkpoint(str(tmp_path / "sub")) is None
    assert int(ckpt.save_counter.numpy()) == 0
    v.assign([0.0, 0.0])
    ckpt.read(path).assert_consumed()
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_restore_none_restores_nothing():
    v = tf.Variable(4.0)
    status = train.Checkpoint(v=v).restore(None)
    assert float(v.numpy()) == 4.0
    status.expect_partial()
    with pytest.raises(AssertionError, match="No checkpoint"):
        status.assert_consumed()


def test_untrackable_values_are_refused():
    with pytest.raises(ValueError, match="wrap a plain value in tf.Variable"):
        train.Checkpoint(step=3)
    ckpt = train.Checkpoint()
    with pytest.raises(ValueError, match="cannot track"):
        ckpt.x = tf.constant(1.0)
    with pytest.raises(AttributeError):
        ckpt.save_counter = tf.Variable(1)


def test_attributes_assigned_later_are_tracked(tmp_path):
    ckpt = train.Checkpoint()
    ckpt.step = tf.Variable(7)
    path = ckpt.write(str(tmp_path / "c"))
    assert [k for k, _ in train.list_variables(path)] == ["step/.ATTRIBUTES/VARIABLE_VALUE"]


def test_missing_variables_and_status_assertions(trained):
    model, optimizer, checkpoint, directory = trained
    path = checkpoint.save(os.path.join(directory, "ckpt"))
    # Only the model: the optimizer's values stay unused.
    new_model = make_cnn()
    new_model(batch()[0])
    status = train.Checkpoint(model=new_model).restore(path)
    status.assert_existing_objects_matched()
    status.assert_nontrivial_match()
    with pytest.raises(AssertionError, match="optimizer/iter"):
        status.assert_consumed()
    assert status.expect_partial() is status
    for got, want in zip(weights(new_model), weights(model), strict=True):
        np.testing.assert_array_equal(got, want)


def test_extra_live_variables_fail_existing_objects_matched(trained):
    _, _, checkpoint, directory = trained
    path = checkpoint.save(os.path.join(directory, "ckpt"))
    new_model, new_optimizer = _fresh()
    new_model(batch()[0])
    extra = tf.Variable(5.0)
    status = train.Checkpoint(model=new_model, optimizer=new_optimizer, extra=extra).restore(path)
    with pytest.raises(AssertionError, match="extra"):
        status.assert_existing_objects_matched()
    assert float(extra.numpy()) == 5.0


def test_nothing_matched_fails_nontrivial_match(tmp_path):
    path = train.Checkpoint(a=tf.Variable(1)).write(str(tmp_path / "a"))
    status = train.Checkpoint(b=tf.Variable(2)).restore(path)
    with pytest.raises(AssertionError, match="Nothing except the root"):
        status.assert_nontrivial_match()


def test_shape_mismatch_names_the_key_and_both_shapes(trained):
    _, _, checkpoint, directory = trained
    path = checkpoint.save(os.path.join(directory, "ckpt"))
    wider = make_cnn(dense_units=5)
    wider(batch()[0])
    before = weights(wider)
    with pytest.raises(ValueError) as info:
        train.Checkpoint(model=wider).restore(path)
    message = str(info.value)
    assert "model/layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE" in message
    assert "(36, 3)" in message and "(36, 5)" in message
    for got, want in zip(weights(wider), before, strict=True):  # nothing was half-restored
        np.testing.assert_array_equal(got, want)


def test_dtype_mismatch_is_a_value_error(tmp_path):
    path = train.Checkpoint(v=tf.Variable([1, 2])).write(str(tmp_path / "i"))
    with pytest.raises(ValueError, match="dtype int32.*float32|int32"):
        train.Checkpoint(v=tf.Variable([1.0, 2.0])).restore(path)


def test_nested_checkpoints_and_containers(tmp_path):
    a, b, c = tf.Variable(1.0), tf.Variable([2, 3]), tf.Variable(4.0)
    outer = train.Checkpoint(inner=train.Checkpoint(a=a), items=[b, {"c": c}])
    path = outer.write(str(tmp_path / "nested"))
    keys = [k for k, _ in train.list_variables(path)]
    assert keys == [
        "inner/a/.ATTRIBUTES/VARIABLE_VALUE",
        "items/0/.ATTRIBUTES/VARIABLE_VALUE",
        "items/1/c/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    a2, b2, c2 = tf.Variable(0.0), tf.Variable([0, 0]), tf.Variable(0.0)
    restored = train.Checkpoint(inner=train.Checkpoint(a=a2), items=[b2, {"c": c2}])
    restored.restore(path).assert_consumed()
    assert (float(a2.numpy()), list(b2.numpy()), float(c2.numpy())) == (1.0, [2, 3], 4.0)


def test_objects_with_the_checkpoint_children_protocol(tmp_path):
    class Counter:
        def __init__(self):
            self.count = tf.Variable(0)

        def _trackable_children(self):
            return {"count": self.count}

    counter = Counter()
    counter.count.assign(9)
    path = train.Checkpoint(counter=counter).write(str(tmp_path / "p"))
    other = Counter()
    train.Checkpoint(counter=other).restore(path).assert_consumed()
    assert int(other.count.numpy()) == 9


def test_distributed_variables_save_one_value_and_restore_every_copy(tmp_path):
    mirrored = FakeMirrored([1.0, 2.0])
    mirrored.copies[1].assign([9.0, 9.0])  # only the primary copy is saved
    path = train.Checkpoint(w=mirrored).write(str(tmp_path / "m"))
    assert mirrored.saved_through_protocol == 1
    np.testing.assert_array_equal(train.load_variable(path, "w/.ATTRIBUTES/VARIABLE_VALUE"), [1, 2])
    target = FakeMirrored([0.0, 0.0])
    train.Checkpoint(w=target).restore(path).assert_consumed()
    for copy in target.copies:
        np.testing.assert_array_equal(copy.numpy(), [1.0, 2.0])
    # ... and into a plain variable (a checkpoint from a strategy restored without one).
    plain = tf.Variable([0.0, 0.0])
    train.Checkpoint(w=plain).restore(path).assert_consumed()
    np.testing.assert_array_equal(plain.numpy(), [1.0, 2.0])


def test_concurrent_writes_to_one_prefix_fail_loudly(tmp_path, monkeypatch):
    entered, release = threading.Event(), threading.Event()
    original = ckpt_format.write_files

    def slow_write(*args, **kwargs):
        entered.set()
        assert release.wait(10)
        return original(*args, **kwargs)

    monkeypatch.setattr("simdist.checkpoint.checkpoint.write_files", slow_write)
    prefix = str(tmp_path / "shared")
    first = train.Checkpoint(v=tf.Variable(1))
    worker = threading.Thread(target=first.write, args=(prefix,))
    worker.start()
    assert entered.wait(10)
    try:
        with pytest.raises(errors.FailedPreconditionError, match="Concurrent writes"):
            train.Checkpoint(v=tf.Variable(2)).write(prefix)
    finally:
        release.set()
        worker.join(10)
    monkeypatch.setattr("simdist.checkpoint.checkpoint.write_files", original)
    train.Checkpoint(v=tf.Variable(3)).write(prefix)  # free again once the first finished


def test_concurrent_saves_to_different_prefixes_both_land(tmp_path):
    ckpts = [train.Checkpoint(v=tf.Variable(i)) for i in range(2)]
    threads = [
        threading.Thread(target=c.save, args=(str(tmp_path / f"worker{i}"),))
        for i, c in enumerate(ckpts)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    listed = sorted(
        os.path.basename(p)
        for p in train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths
    )
    assert listed == ["worker0-1", "worker1-1"]


def test_failed_save_does_not_advance_the_counter(tmp_path, monkeypatch):
    ckpt = train.Checkpoint(v=tf.Variable(1))

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("simdist.checkpoint.checkpoint.write_files", broken)
    with pytest.raises(OSError, match="disk full"):
        ckpt.save(str(tmp_path / "ckpt"))
    assert int(ckpt.save_counter.numpy()) == 0
