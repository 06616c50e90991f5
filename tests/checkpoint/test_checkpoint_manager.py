"""CheckpointManager: numbering, max_to_keep, taking over a directory, intervals."""

import os
import re

import pytest

import simdist as tf
from simdist import train


def _manager(directory, **kwargs):
    v = tf.Variable(0)
    return v, train.CheckpointManager(train.Checkpoint(v=v), str(directory), **kwargs)


def test_keeps_the_newest_and_deletes_the_rest(tmp_path):
    v, manager = _manager(tmp_path, max_to_keep=2)
    assert manager.latest_checkpoint is None
    for value in range(1, 5):
        v.assign(value)
        manager.save()
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3", "ckpt-4"]
    assert manager.latest_checkpoint == str(tmp_path / "ckpt-4")
    listing = sorted(os.listdir(tmp_path))
    assert [re.sub(r"data-[0-9a-f]{16}", "data-H", name) for name in listing] == [
        "checkpoint",
        "ckpt-3.data-H.npz",
        "ckpt-3.index",
        "ckpt-4.data-H.npz",
        "ckpt-4.index",
    ]
    assert train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-4")


def test_a_new_manager_takes_over_the_directory(tmp_path):
    v, first = _manager(tmp_path, max_to_keep=3)
    for value in (1, 2):
        v.assign(value)
        first.save()
    w, second = _manager(tmp_path, max_to_keep=3)
    assert second.restore_or_initialize() == str(tmp_path / "ckpt-2")
    assert int(w.numpy()) == 2
    second.save()  # save_counter was restored: this is ckpt-3
    second.save()
    assert [os.path.basename(p) for p in second.checkpoints] == ["ckpt-2", "ckpt-3", "ckpt-4"]


def test_restore_or_initialize_runs_init_fn_on_an_empty_directory(tmp_path):
    calls = []
    v = tf.Variable(0)
    manager = train.CheckpointManager(
        train.Checkpoint(v=v), str(tmp_path), max_to_keep=1, init_fn=lambda: calls.append(1)
    )
    assert manager.restore_or_initialize() is None
    assert calls == [1]


def test_step_counter_gates_saves_and_save_counter_numbers_them_as_tf(tmp_path):
    # TF 2.21 (checked side by side): the interval is measured on step_counter, the file
    # number is save_counter, and a second save at the same step writes nothing even with
    # check_interval=False.
    step = tf.Variable(0, dtype=tf.int64)
    ckpt = train.Checkpoint(step=step)
    manager = train.CheckpointManager(
        ckpt, str(tmp_path), max_to_keep=None, step_counter=step, checkpoint_interval=10
    )
    saved = []
    for s in (0, 5, 10, 12, 20):
        step.assign(s)
        saved.append(manager.save())
    assert [p and os.path.basename(p) for p in saved] == [
        "ckpt-1",
        None,
        "ckpt-2",
        None,
        "ckpt-3",
    ]
    step.assign(21)
    assert os.path.basename(manager.save(check_interval=False)) == "ckpt-4"
    assert manager.save(checkpoint_number=99, check_interval=False) is None  # same step
    step.assign(22)
    assert os.path.basename(manager.save(checkpoint_number=99, check_interval=False)) == "ckpt-99"


def test_bad_arguments_say_what_to_do(tmp_path):
    ckpt = train.Checkpoint(v=tf.Variable(0))
    with pytest.raises(ValueError, match="positive integer"):
        train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)
    with pytest.raises(ValueError, match="step_counter"):
        train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1, checkpoint_interval=5)
    with pytest.raises(NotImplementedError, match="wall time"):
        train.CheckpointManager(ckpt, str(tmp_path), 1, keep_checkpoint_every_n_hours=1)
