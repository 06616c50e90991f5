"""simdist.sim.reduction_sensitivity and `simdist sensitivity`: replays under each all-reduce."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from simdist import cli
from simdist.collectives.forced import FORCEABLE
from simdist.sim import reduction_sensitivity
from simdist.sim.replay import _scalar, replay
from simdist.sim.sensitivity import compare, resolve_algorithms

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import sensitivity_programs as programs  # noqa: E402

HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def test_the_spread_is_zero_when_every_run_is_the_exact_sum():
    runs = [replay(programs.mirrored, "exact", steps=5) for _ in range(2)]
    report = compare(runs, "mirrored")
    assert report.steps == 5 and report.diverged == ()
    for var in report.variables:
        assert (var.spread.max_abs, var.spread.max_ulps, var.spread.differing) == (0.0, 0, 0)
    assert report.identical == (("exact", "exact"),)


def test_algorithms_move_the_weights_and_one_host_hierarchical_is_the_ring():
    report = reduction_sensitivity(programs.mirrored, replicas=4, steps=6)
    assert report.algorithms == (
        "ring",
        "double_binary_tree",
        "recursive_doubling",
        "hierarchical",
        "exact",
    )
    assert report.replays[0].num_replicas == 4 and report.replays[0].strategy == "MirroredStrategy"
    assert [v.name for v in report.variables] == ["dense/kernel:0", "dense/bias:0"]
    assert max(v.spread.differing for v in report.variables) > 0
    # on one host, hierarchical's intra-host ring is the whole ring: the same bits
    assert ("ring", "hierarchical") in report.identical
    by_name = {c.algorithm: c for c in report.checks}
    assert by_name["exact"].weights_differing == 0
    assert all(by_name[a].weights_differing > 0 for a in ("ring", "recursive_doubling"))
    text = report.table()
    assert "Bit-identical runs: ring = hierarchical" in text
    assert "dense/kernel:0" in text and "(16, 8)" in text


def test_multi_worker_cluster_replays_with_hierarchical_across_workers():
    report = reduction_sensitivity(programs.multi_worker, workers=2, replicas=2, steps=4)
    first = report.replays[0]
    assert (first.num_workers, first.num_replicas) == (2, 4)
    assert first.strategy == "CollectiveAllReduceStrategy"
    # 2 workers x 2 devices: hierarchical adds pairs, then the pairs (recursive doubling's
    # order), not the ring's
    groups = [set(g) for g in report.identical]
    assert {"recursive_doubling", "hierarchical"} in groups
    assert not any({"ring", "hierarchical"} <= g for g in groups)


def test_steps_cap_and_short_programs():
    assert replay(programs.mirrored, "ring", steps=3).steps == 3
    assert replay(lambda: programs.train("mirrored", steps=2), "ring", steps=10).steps == 2
    with pytest.raises(ValueError, match="trained no step"):
        replay(programs.untrained, "ring")


def test_divergence_follows_the_stated_rule():
    runs = [replay(programs.mirrored, name, steps=6) for name in ("exact", "ring")]
    gap = max(abs(a - b) for a, b in zip(runs[0].losses, runs[1].losses, strict=True))
    assert gap > 0  # the orders change the losses of this program
    strict = compare(runs, rtol=0.0, atol=gap / 2)
    loose = compare(runs, rtol=0.0, atol=gap)
    assert strict.diverged == ("ring",) and loose.diverged == ()
    assert strict.checks[1].max_abs == gap


def test_losses_are_read_from_what_the_step_returns():
    assert _scalar(np.float32(2.5)) == 2.5
    assert _scalar((np.float32(1.0), [3.0])) == 1.0
    assert _scalar({"loss": np.array([4.0])}) == 4.0
    assert _scalar(np.zeros(3)) is None and _scalar(None) is None


def test_algorithm_names():
    assert resolve_algorithms(["tree", "ring", "double_binary_tree"]) == (
        "double_binary_tree",
        "ring",
    )
    with pytest.raises(ValueError, match="unknown all-reduce algorithm 'spiral'"):
        resolve_algorithms(["spiral"])


# --- the command line ------------------------------------------------------------------


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(programs.SCRIPT.format(folder=str(HERE)))
    return path


def test_cli_prints_the_table(script, capsys):
    code = cli.main(
        ["sensitivity", "--steps", "3", "--algorithms", "ring,tree,exact", str(script), "5"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "3 training steps, 3 all-reduce algorithms" in out
    assert "double_binary_tree" in out and "Verdict:" in out


def test_cli_exit_1_when_a_loss_curve_diverges(script, capsys):
    code = cli.main(
        [
            "sensitivity",
            "--steps",
            "6",
            "--algorithms",
            "exact,ring",
            "--rtol",
            "0",
            "--atol",
            "0",
            str(script),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1, captured.err + captured.out
    assert "at step" in captured.out


def test_cli_bad_input_exits_2(script, capsys, tmp_path):
    assert cli.main(["sensitivity", "--algorithms", "ring,spiral", str(script)]) == 2
    err = capsys.readouterr().err
    assert "unknown all-reduce algorithm 'spiral'" in err
    assert all(name in err for name in FORCEABLE)
    assert cli.main(["sensitivity", "--steps", "0", str(script)]) == 2
    assert "argument --steps: must be an integer in [1, " in capsys.readouterr().err
    assert cli.main(["sensitivity", str(tmp_path / "missing.py")]) == 2
    assert "argument script: no such file" in capsys.readouterr().err
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    assert cli.main(["sensitivity", "--algorithms", "ring", str(empty)]) == 2
    assert "trained no step" in capsys.readouterr().err


def test_cli_plot_without_matplotlib_says_how_to_install(script, capsys, tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    assert cli.main(["sensitivity", "--plot", str(tmp_path / "p.png"), str(script)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'simdist[plot]'" in err
    assert not (tmp_path / "p.png").exists()


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="matplotlib is not installed (the 'plot' extra)")
def test_cli_plot_writes_a_png(script, tmp_path):
    out = tmp_path / "losses.png"
    code = cli.main(
        [
            "sensitivity",
            "--steps",
            "3",
            "--algorithms",
            "ring,exact",
            "--plot",
            str(out),
            str(script),
        ]
    )
    assert code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
