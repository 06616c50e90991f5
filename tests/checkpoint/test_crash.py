"""The crash test in the suite: one SIGKILL mid-save per save path (the scenario does 20)."""

import pathlib
import subprocess
import sys

import pytest

SCENARIO = pathlib.Path(__file__).resolve().parents[2] / "scenarios" / "crash_checkpoints.py"


def _run(*args):
    return subprocess.run(
        [sys.executable, str(SCENARIO), *args], capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_a_kill_mid_save_always_leaves_a_loadable_complete_checkpoint():
    done = _run("--kills", "1", "--seed", "7")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    rows = [line.split() for line in done.stdout.splitlines()[1:]]
    assert [row[0] for row in rows] == [
        "write", "save", "manager", "weights_prefix", "weights_h5", "model_dir", "keras",
        "model_checkpoint",
    ]  # fmt: skip
    assert all(row[1] == row[2] == "1" for row in rows)


@pytest.mark.slow
def test_the_check_finds_a_save_that_loses_the_previous_checkpoint():
    done = _run("--kills", "3", "--paths", "unsafe_write")
    assert done.returncode == 1
    assert "FAILED unsafe_write: generation" in done.stdout
    assert "nothing loads" in done.stdout
