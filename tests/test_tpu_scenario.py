"""scenarios/tpu_training.py runs end to end in its short mode."""

import math
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_tpu_training_short_mode():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scenarios" / "tpu_training.py"), "--steps", "6",
         "--steps-per-call", "3", "--batch-per-replica", "8"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "TPU v4-8: 4 replicas"
    steps = [line for line in lines if line.startswith("Step ")]
    assert [s.split(":")[0] for s in steps] == ["Step 3", "Step 6"]
    losses = [float(s.rsplit(" ", 1)[1]) for s in steps]
    assert all(math.isfinite(x) for x in losses)
    assert lines[-1].startswith("Predicted step on v4-8 (4 chips, 4 replicas): ")
    assert float(lines[-1].split(": ")[1].split()[0]) > 0
