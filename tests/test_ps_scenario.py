"""scenarios/parameter_server_training.py: runs fast, reproducible per seed, survives a kill."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

SCENARIO = pathlib.Path(__file__).parent.parent / "scenarios" / "parameter_server_training.py"


@pytest.fixture(scope="module")
def scenario():
    spec = importlib.util.spec_from_file_location("parameter_server_training", SCENARIO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runs_and_is_reproducible(scenario):
    lines: list[str] = []
    first = scenario.train(workers=2, ps=2, epochs=2, steps=6, seed=0, out=lines.append)
    again = scenario.train(workers=2, ps=2, epochs=2, steps=6, seed=0, out=lambda _: None)
    assert first == again
    assert first["finished"] == first["iterations"] == 13
    assert lines[0].startswith("Finished epoch 0, accuracy is ")
    assert "weights digest" in lines[-1]
    assert first["loss"] < 1.2  # it learns (chance level is log 3 = 1.10 at the start)


def test_sharding_does_not_change_the_numbers(scenario):
    sharded = scenario.train(workers=2, ps=2, epochs=1, steps=5, seed=1, out=lambda _: None)
    plain = scenario.train(workers=2, ps=1, epochs=1, steps=5, seed=1, out=lambda _: None)
    assert sharded["digest"] == plain["digest"]


def test_kill_worker_reruns_the_step(scenario):
    result = scenario.train(epochs=1, steps=8, seed=0, kill_worker="1@1", out=lambda _: None)
    assert result["killed"] == 1 and result["finished"] == result["iterations"] == 9


def test_command_line(scenario, capsys):
    assert scenario.main(["--steps", "3", "--epochs", "1", "--kill-worker", "0@1"]) == 0
    assert "1 lost to worker failures and rerun" in capsys.readouterr().out
