"""The same checkpoint programs on simdist and on real TensorFlow 2.21, results compared.

Skipped where TensorFlow is not installed. TF runs in a subprocess (it must not share the
process with simdist's tests); simdist runs the same program here.
"""

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

if importlib.util.find_spec("tensorflow") is None:  # found, not imported: TF runs apart
    pytest.skip("TensorFlow is not installed; nothing to compare", allow_module_level=True)

pytestmark = pytest.mark.tensorflow  # runs real TensorFlow: only with --tensorflow

PROGRAM = textwrap.dedent(
    """
    import json, os, sys, tempfile
    if sys.argv[1] == "tf":
        import tensorflow as tf
    else:
        import simdist as tf
    d = tempfile.mkdtemp()
    out = {}
    # An iterator checkpoint resumes at the same element (no shuffle: same numbers in both).
    ds = tf.data.Dataset.range(10).batch(3)
    it = iter(ds)
    out["before"] = [next(it).numpy().tolist() for _ in range(2)]
    path = tf.train.Checkpoint(iterator=it).save(os.path.join(d, "it"))
    out["continued"] = [next(it).numpy().tolist() for _ in range(2)]
    fresh = iter(ds)
    tf.train.Checkpoint(iterator=fresh).restore(path)
    out["restored"] = [next(fresh).numpy().tolist() for _ in range(2)]
    out["iterator_keys"] = [k for k, _ in tf.train.list_variables(path)
                            if k != "_CHECKPOINTABLE_OBJECT_GRAPH"]
    # Shuffled: a restored iterator continues as the saved one would have (own numbers).
    sh = tf.data.Dataset.range(12).shuffle(12, seed=5).repeat(2).batch(5)
    it = iter(sh)
    next(it)
    path = tf.train.Checkpoint(iterator=it).save(os.path.join(d, "sh"))
    rest = [next(it).numpy().tolist() for _ in range(3)]
    fresh = iter(sh)
    tf.train.Checkpoint(iterator=fresh).restore(path)
    out["shuffle_resumes"] = [next(fresh).numpy().tolist() for _ in range(3)] == rest
    # Tracked lists and dicts, restore-on-append, deferred restore (the checkpoint guide).
    save = tf.train.Checkpoint()
    save.listed = [tf.Variable(1.0)]
    save.listed.append(tf.Variable(2.0))
    save.mapped = {"one": save.listed[0]}
    save.mapped["two"] = save.listed[1]
    path = save.save(os.path.join(d, "l"))
    out["list_keys"] = [k for k, _ in tf.train.list_variables(path)
                        if k != "_CHECKPOINTABLE_OBJECT_GRAPH"]
    restore = tf.train.Checkpoint()
    v2 = tf.Variable(0.0)
    restore.mapped = {"two": v2}
    restore.restore(path)
    restore.listed = []
    v1 = tf.Variable(0.0)
    restore.listed.append(v1)
    out["appended"] = [float(v1.numpy()), float(v2.numpy()), repr(restore.listed)]
    out["load_checkpoint"] = float(tf.train.load_checkpoint(path).get_tensor(
        "listed/1/.ATTRIBUTES/VARIABLE_VALUE"))
    # CheckpointManager with step_counter and checkpoint_interval.
    step = tf.Variable(0, dtype=tf.int64)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), os.path.join(d, "m"),
                                         max_to_keep=2, step_counter=step,
                                         checkpoint_interval=10)
    names = []
    for s in (0, 5, 10, 12, 20, 20):
        step.assign(s)
        p = manager.save()
        names.append(p and os.path.basename(p))
    out["manager"] = names
    out["kept"] = [os.path.basename(p) for p in manager.checkpoints]
    print(json.dumps(out))
    """
)


def _run(which):
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, which],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _run_here(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["program", "simdist"])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(PROGRAM, "<checkpoint program>", "exec"), {"__name__": "__main__"})
    return json.loads(printed.getvalue().strip().splitlines()[-1])


@pytest.mark.slow
def test_checkpoint_programs_agree_with_tensorflow(monkeypatch):
    ours, theirs = _run_here(monkeypatch), _run("tf")
    assert ours == theirs
    assert ours["restored"] == ours["continued"] == [[6, 7, 8], [9]]
    assert ours["shuffle_resumes"] is True
    assert ours["appended"][:2] == [1.0, 2.0]
    assert ours["manager"] == ["ckpt-1", None, "ckpt-2", None, "ckpt-3", None]
