"""``simdist check-step SCRIPT``: unmodified scripts, exit codes 0 / 1 / 2."""

from __future__ import annotations

import os
import textwrap

import pytest

from simdist.cli import main

SCENARIOS = os.path.join(os.path.dirname(__file__), "..", "..", "scenarios")

# The TF custom-training tutorial's shape: a strategy, a model, a dataset, a train_step
# inside strategy.run; METRIC_LINE is where the loss metric is updated.
TUTORIAL = """
import numpy as np
import simdist as tf

tf.config.set_virtual_devices(gpus=4)
strategy = tf.distribute.MirroredStrategy()
GLOBAL_BATCH_SIZE = 4 * strategy.num_replicas_in_sync
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 3)).astype(np.float32)
y = rng.integers(2, size=(64,))
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH_SIZE)
dist_dataset = strategy.experimental_distribute_dataset(dataset)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    optimizer = tf.keras.optimizers.SGD(0.1)
train_loss = tf.keras.metrics.Mean("train_loss")  # on the host, fed after each step

def train_step(inputs):
    features, labels = inputs
    with tf.GradientTape() as tape:
        logits = model(features, training=True)
        per_example = tf.keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True)
        loss = LOSS_LINE
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for batch in dist_dataset:
    per_replica_losses = strategy.run(train_step, args=(batch,))
    METRIC_LINE
"""
GOOD_LOSS = "tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH_SIZE)"
GOOD_METRIC = "train_loss.update_state(strategy.reduce('SUM', per_replica_losses, axis=None))"


def _script(tmp_path, loss=GOOD_LOSS, metric=GOOD_METRIC):
    path = tmp_path / "train.py"
    path.write_text(
        textwrap.dedent(TUTORIAL).replace("LOSS_LINE", loss).replace("METRIC_LINE", metric)
    )
    return str(path)


def test_clean_tutorial_script_exits_0(tmp_path, capsys):
    assert main(["check-step", _script(tmp_path)]) == 0
    assert "N-vs-1 equivalent within float rounding" in capsys.readouterr().out


def test_loss_averaged_per_replica_exits_1_and_names_the_line(tmp_path, capsys):
    assert main(["check-step", _script(tmp_path, loss="tf.reduce_mean(per_example)")]) == 1
    out = capsys.readouterr().out
    assert "likely cause 1: loss scaled by the wrong count" in out
    lines = textwrap.dedent(TUTORIAL).splitlines()
    number = next(i for i, line in enumerate(lines, 1) if "LOSS_LINE" in line)
    assert f"train.py:{number}  `loss = tf.reduce_mean(per_example)`" in out


def test_metric_updated_outside_run_with_one_replica(tmp_path, capsys):
    metric = "train_loss.update_state(strategy.experimental_local_results(per_replica_losses)[0])"
    assert main(["check-step", "--steps", "2", _script(tmp_path, metric=metric)]) == 1
    out = capsys.readouterr().out
    assert "likely cause 1: metric updated outside strategy.run" in out
    assert "experimental_local_results(per_replica_losses)[0])`" in out


def test_fewer_replicas_flag(tmp_path, capsys):
    assert main(["check-step", "--replicas", "2", _script(tmp_path)]) == 0
    assert "2 replicas x B/2" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["custom_training.py", "--epochs", "1", "--steps", "2", "--batch-per-replica", "4"],
        ["keras_fit.py", "--epochs", "1", "--steps", "2"],
        ["multi_worker.py", "--steps", "2"],
        ["tpu_training.py", "--steps", "2"],
    ],
)
def test_scenarios_are_equivalent(argv, capsys):
    script = os.path.join(SCENARIOS, argv[0])
    assert main(["check-step", "--steps", "2", script, *argv[1:]]) == 0
    assert "N-vs-1 equivalent within float rounding" in capsys.readouterr().out


def test_bad_input_exits_2(tmp_path, capsys):
    assert main(["check-step", str(tmp_path / "missing.py")]) == 2
    assert "argument script: no such file" in capsys.readouterr().err
    assert main(["check-step", "--steps", "0", _script(tmp_path)]) == 2
    assert "argument --steps: must be an integer in [1, " in capsys.readouterr().err
    idle = tmp_path / "idle.py"
    idle.write_text("import simdist as tf\nprint(tf.constant(1.0))\n")
    assert main(["check-step", str(idle)]) == 2
    assert "never called strategy.run" in capsys.readouterr().err


KERAS_FIT = """
import numpy as np
import simdist as tf

strategy = tf.distribute.MirroredStrategy()
rng = np.random.default_rng(0)
x = rng.standard_normal((40, 3)).astype(np.float32)
y = rng.integers(2, size=(40,))
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(4 * strategy.num_replicas_in_sync)
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)), NORM
                                 tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(dataset, epochs=1, verbose=0)
"""


@pytest.mark.parametrize("norm, status", [("", 0), ("tf.keras.layers.BatchNormalization(),", 1)])
def test_keras_fit(tmp_path, capsys, norm, status):
    path = tmp_path / "fit.py"
    path.write_text(KERAS_FIT.replace("NORM", norm))
    assert main(["check-step", str(path)]) == status
    out = capsys.readouterr().out
    if status:
        assert "likely cause 1: BatchNormalization statistics per replica" in out
    else:
        assert "N-vs-1 equivalent within float rounding" in out


def test_a_per_worker_script_as_a_virtual_cluster(tmp_path, capsys):
    path = _script(tmp_path)
    text = open(path, encoding="utf-8").read()
    text = text.replace("tf.config.set_virtual_devices(gpus=4)\n", "").replace(
        "MirroredStrategy()", "MultiWorkerMirroredStrategy()"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    argv = ["check-step", "--strategy", "multi_worker", "--workers", "2", "--replicas", "4"]
    assert main([*argv, path]) == 0
    out = capsys.readouterr().out
    assert "CollectiveAllReduceStrategy, 4 replicas" in out and "equivalent" in out
