"""Tests for ``simdist cost``: nccl-tests-style tables and the step scaling table."""

from simdist.cli import main


def test_allreduce_table_columns_and_sizes(capsys):
    assert (
        main(
            [
                "cost",
                "allreduce",
                "--topology",
                "dgx-h100",
                "--algo",
                "ring",
                "-b",
                "8",
                "-e",
                "8K",
                "-f",
                "2",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if not line.startswith("#")]
    assert [int(r[0]) for r in rows] == [8 * 2**i for i in range(11)]
    assert [int(r[1]) for r in rows] == [2 * 2**i for i in range(11)]
    assert {r[2] for r in rows} == {"float"} and {r[3] for r in rows} == {"sum"}
    assert {r[4] for r in rows} == {"-1"}
    header = next(line for line in lines if "algbw" in line)
    assert header.split()[1:] == [
        "size",
        "count",
        "type",
        "redop",
        "root",
        "time",
        "algbw",
        "busbw",
        "algorithm",
    ]
    assert lines[-1].startswith("# Avg bus bandwidth")


def test_every_collective_prints(capsys):
    for name in ("reducescatter", "allgather", "broadcast", "reduce", "alltoall"):
        assert (
            main(["cost", name, "--topology", "dgx-a100", "-b", "1M", "-e", "4M", "-f", "2"]) == 0
        )
        out = capsys.readouterr().out
        assert len([line for line in out.splitlines() if not line.startswith("#")]) == 3


def test_bad_size_is_a_clear_error(capsys):
    assert main(["cost", "allreduce", "-b", "8KB"]) == 2
    assert "invalid size '8KB'" in capsys.readouterr().err


def test_unknown_topology_is_a_clear_error(capsys):
    assert main(["cost", "allreduce", "--topology", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_step_prints_the_scaling_table_and_a_trace(capsys, tmp_path):
    trace = tmp_path / "step.json"
    assert (
        main(
            [
                "cost",
                "step",
                "--model",
                "fashion-mnist-cnn",
                "--topology",
                "dgx-h100",
                "--batch-per-device",
                "64",
                "--devices",
                "1,2,4,8",
                "--trace",
                str(trace),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in out if line and line.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == [1, 2, 4, 8]
    assert float(rows[0][8]) == 100.0
    assert trace.exists()
