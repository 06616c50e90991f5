"""Deferred restoration as TF: objects created or appended after restore() get their values."""

import ast
import pathlib

import numpy as np

import simdist as tf
from simdist import train
from simdist.core.trackable_data_structures import DictWrapper, ListWrapper


def _guide_checkpoint(tmp_path):
    """The checkpoint guide's list/dict example (TF 2.21 gives the values asserted below)."""
    save = train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    save.mapped = {"one": save.listed[0]}
    save.mapped["two"] = save.listed[1]
    return save.save(str(tmp_path / "tf_list_example"))


def test_tracked_lists_and_dicts_save_each_variable_once(tmp_path):
    path = _guide_checkpoint(tmp_path)
    assert [k for k, _ in train.list_variables(path)] == [
        "listed/0/.ATTRIBUTES/VARIABLE_VALUE",
        "listed/1/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    ]


def test_restore_into_a_dict_then_on_append_into_a_list(tmp_path):
    path = _guide_checkpoint(tmp_path)
    restore = train.Checkpoint()
    v2 = tf.Variable(0.0)
    restore.mapped = {"two": v2}
    status = restore.restore(path)
    assert float(v2.numpy()) == 2.0
    restore.listed = []
    assert isinstance(restore.listed, ListWrapper) and repr(restore.listed) == "ListWrapper([])"
    assert isinstance(restore.mapped, DictWrapper) and restore.mapped == {"two": v2}
    v1 = tf.Variable(0.0)
    restore.listed.append(v1)  # restores v1 from the restore() above
    assert float(v1.numpy()) == 1.0
    restore.listed.append(v2)
    status.assert_consumed()


def test_a_variable_assigned_after_restore_takes_its_value(tmp_path):
    # The checkpoint guide's "delayed restoration" with fake layers.
    net = train.Checkpoint(l1=train.Checkpoint(bias=tf.Variable(tf.ones([5]))))
    net.l1.kernel = tf.Variable(tf.ones([1, 5]) * 7)
    path = train.Checkpoint(net=net).save(str(tmp_path / "n"))
    to_restore = tf.Variable(tf.zeros([5]))
    fake_layer = train.Checkpoint(bias=to_restore)
    status = train.Checkpoint(net=train.Checkpoint(l1=fake_layer)).restore(path)
    np.testing.assert_array_equal(to_restore.numpy(), np.ones(5))
    deferred = tf.Variable(tf.zeros([1, 5]))
    fake_layer.kernel = deferred
    np.testing.assert_array_equal(deferred.numpy(), np.full((1, 5), 7.0))
    status.assert_existing_objects_matched()


def test_a_keras_layer_attribute_assigned_after_restore_is_restored(tmp_path):
    class Holder(tf.keras.layers.Layer):
        pass

    saved = Holder()
    saved.extra = tf.Variable([3.0, 4.0])
    path = train.Checkpoint(layer=saved).write(str(tmp_path / "k"))
    later = Holder()
    train.Checkpoint(layer=later).read(path)
    later.extra = tf.Variable([0.0, 0.0])
    np.testing.assert_array_equal(later.extra.numpy(), [3.0, 4.0])


def test_a_later_restore_wins_over_an_earlier_pending_one(tmp_path):
    first = train.Checkpoint(box=train.Checkpoint(v=tf.Variable(1.0))).write(str(tmp_path / "a"))
    second = train.Checkpoint(box=train.Checkpoint(v=tf.Variable(2.0))).write(str(tmp_path / "b"))
    box = train.Checkpoint()
    root = train.Checkpoint(box=box)
    root.read(first)
    root.read(second)
    box.v = tf.Variable(0.0)
    assert float(box.v.numpy()) == 2.0


def test_checkpoint_imports_nothing_from_keras():
    package = pathlib.Path(tf.__file__).parent / "checkpoint"
    for source in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("simdist.keras"), (source.name, node.module)
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("simdist.keras") for a in node.names)
