"""The tutorial scenarios run end to end in their short mode (``--epochs 1 --steps 5``)."""

import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_scenario(name: str, *args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scenarios" / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_custom_training_short_mode(tmp_path):
    trace = tmp_path / "step.json"
    lines = run_scenario(
        "custom_training.py",
        "--epochs", "2", "--steps", "3", "--replicas", "2", "--batch-per-replica", "16",
        "--dataset", "synthetic", "--trace", str(trace), "--checkpoint-dir", str(tmp_path),
    )  # fmt: skip
    assert lines[1] == "Number of devices: 2"
    epochs = [line for line in lines if line.startswith("Epoch ")]
    # 2 epochs of the main loop, 2 of the iterator variant, 2 of distributed_train_epoch.
    assert len(epochs) == 6
    assert all(", Test Accuracy: " in line for line in epochs[:2])
    assert [line.split(",")[0] for line in epochs[4:]] == ["Epoch 1", "Epoch 2"]
    assert (
        sum(
            line.startswith("Accuracy after restoring the saved model without strategy: ")
            for line in lines
        )
        == 1
    )
    # A checkpoint after epoch 1 only (epoch % 2 == 0).
    assert (tmp_path / "ckpt-1.index").exists() and not (tmp_path / "ckpt-2.index").exists()
    assert any(line.startswith("One training step of 2 replicas on dgx-h100") for line in lines)
    assert any(line.startswith("Predicted step on dgx-h100") for line in lines)
    events = json.loads(trace.read_text())["traceEvents"]
    assert {e["pid"] for e in events if e.get("ph") == "X"} == {0, 1}


@pytest.mark.parametrize(
    "strategy,devices",
    [("central_storage", 2), ("multi_worker", 2), ("one_device", 1)],
)
def test_custom_training_on_the_other_strategies_of_the_guide(tmp_path, strategy, devices):
    lines = run_scenario(
        "custom_training.py",
        "--epochs", "1", "--steps", "2", "--replicas", "2", "--batch-per-replica", "8",
        "--strategy", strategy, "--checkpoint-dir", str(tmp_path),
    )  # fmt: skip
    assert f"Number of devices: {devices}" in lines
    assert any(
        line.startswith("Accuracy after restoring the saved model without strategy: ")
        for line in lines
    )


def test_custom_training_fashion_mnist_absent_says_where(tmp_path):
    done = subprocess.run(
        [
            sys.executable, str(ROOT / "scenarios" / "custom_training.py"),
            "--epochs", "1", "--steps", "1", "--dataset", "fashion_mnist",
            "--data-dir", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    assert "train-images-idx3-ubyte.gz" in done.stderr
    assert "zalandoresearch/fashion-mnist" in done.stderr


@pytest.mark.parametrize("replicas", ["1", "4"])
def test_keras_fit_short_mode(replicas):
    lines = run_scenario(
        "keras_fit.py", "--epochs", "1", "--steps", "5", "--replicas", replicas, "--verbose", "2"
    )
    assert lines[0] == f"Number of devices: {replicas}"
    assert any(line.startswith("evaluate (dataset): ") for line in lines)
    losses = [line for line in lines if line.startswith("fit losses")]
    assert len(losses) == 2
    assert "Saved and loaded without a strategy: predictions equal: True" in lines
    assert any(line.startswith(f"One fit step of {replicas} replicas") for line in lines)


def test_keras_io_multi_gpu_guide_short_mode():
    lines = run_scenario(
        "keras_io_multi_gpu.py", "--samples", "256", "--epochs", "1", "--replicas", "2"
    )
    assert lines[0] == "Number of devices: 2"
    assert any(line.startswith("evaluate: loss ") for line in lines)
    assert "Creating a new model" in lines
    assert "Restoring from ckpt-1" in lines
    assert "restored a Functional model: True" in lines


@pytest.mark.parametrize("kind", ["functional", "subclassed"])
def test_keras_distributed_tutorial_short_mode(kind):
    lines = run_scenario(
        "keras_distributed_tutorial.py", "--epochs", "2", "--samples", "128", "--model", kind
    )
    assert lines[0] == "Number of devices: 2"
    evals = [line for line in lines if line.startswith("Eval loss: ")]
    assert len(evals) == 3  # trained, loaded without a strategy, loaded in its scope
    assert evals[1].lower() == evals[2].lower()
    assert any(line.startswith("Learning rate for epoch 2 is 0.00100") for line in lines)
    assert f"loaded model kind: {'Functional' if kind == 'functional' else 'DigitNet'}" in lines
