"""``simdist demo``: the custom-training tutorial on virtual GPUs, end to end, small."""

import json
import subprocess
import sys

from simdist import demo
from simdist.cli import main


def test_demo_trains_checkpoints_and_restores_without_a_strategy(tmp_path):
    lines = []
    trace = tmp_path / "demo.trace.json"
    result = demo.run(
        epochs=3,
        num_train=1024,
        num_test=256,
        checkpoint_dir=str(tmp_path),
        trace_path=str(trace),
        out=lines.append,
    )
    assert lines[0] == "Number of devices: 4"
    assert [line.split(",")[0] for line in lines[1:4]] == ["Epoch 1", "Epoch 2", "Epoch 3"]
    assert lines[4].startswith("Accuracy after restoring the saved model without strategy: ")
    # Checkpoints after epochs 1 and 3 (epoch % 2 == 0); the last one is restored.
    assert result["checkpoint"].endswith("ckpt-2")
    assert result["restored_accuracy"] == result["test_accuracy"]
    assert result["test_accuracy"] > 0.2  # learns: chance is 0.1
    assert result["profiled_step_time"] > 0
    events = json.loads(trace.read_text())["traceEvents"]
    assert {e["pid"] for e in events if e.get("ph") == "X"} == {0, 1, 2, 3}  # 4 devices
    assert set(result["predicted"]) == set(demo.PRESETS)
    assert any(line.startswith("Predicted step on dgx-h100") for line in lines)
    rows = result["predicted"]["dgx-h100"]
    assert rows[0].num_devices == 1 and rows[-1].num_devices == 8
    assert rows[-1].step.step_time > rows[0].step.step_time  # the all-reduce costs something


def test_cli_rejects_bad_sizes(capsys):
    assert main(["demo", "--epochs", "0"]) == 2
    assert "argument --epochs: must be an integer >= 1, got '0'" in capsys.readouterr().err


def test_console_script_version():
    proc = subprocess.run(
        [sys.executable, "-m", "simdist.cli", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.startswith("simdist ")
