"""``simdist cost`` and ``simdist topology``: every bad input is one line and exit status 2."""

import json

import pytest

from simdist.cli import main
from simdist.topology import get_topology, save_topology


@pytest.mark.parametrize(
    "argv, message",
    [
        (["cost", "allreduce", "-e", "1e30"], "invalid size '1e30'"),
        (["cost", "allreduce", "-b", "8", "-e", "2000G"], "above the limit"),
        (["cost", "allreduce", "-f", "1"], "-f/--stepfactor 1 does not grow the size"),
        (["cost", "allreduce", "-f", "0"], "-f/--stepfactor 0 does not grow the size"),
        (["cost", "allreduce", "-f", "-2"], "-f/--stepfactor -2 does not grow the size"),
        (["cost", "allreduce", "-b", "8", "-e", "8G", "-i", "1"], "more than 4096"),
        (["cost", "broadcast", "-r", "99"], "-r/--root: root rank 99 is outside the 8 ranks"),
        (["cost", "reduce", "-r", "-1"], "argument -r/--root: must be an integer >= 0"),
        (["cost", "allreduce", "-g", "0"], "argument -g/--ngpus: must be an integer >= 1"),
        (["cost", "allreduce", "-g", "9"], "-g/--ngpus 9 does not fit"),
        (["cost", "allreduce", "--proto", "LL9"], "unknown NCCL protocol 'LL9'"),
        (["cost", "allreduce", "--topology", "v4-32", "--algo", "nccl"], "describes no GPU"),
        (["cost", "allreduce", "--topology", "h100-cluster:100000"], "limit of 8192"),
        (["cost", "step", "--launch-overhead-us", "-5"], "argument --launch-overhead-us: must"),
        (["cost", "step", "--launch-overhead-us", "nan"], "argument --launch-overhead-us: must"),
        (["cost", "step", "--framework-overhead-us", "inf"], "argument --framework-overhead"),
        (["cost", "step", "--trace", "/missing/dir/t.json"], "does not exist; create it"),
        (["cost", "step", "--devices", "1,x"], "'x' is not a positive integer"),
        (["cost", "step", "--model", "resnet"], "unknown model 'resnet'; use one of"),
        (["topology", "show", "h100-cluster:100000"], "limit of 8192"),
    ],
)
def test_bad_input_is_one_clear_line(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


def test_cost_accepts_the_topology_files_topology_show_reads(tmp_path, capsys):
    path = tmp_path / "box.json"
    save_topology(get_topology("dgx-a100"), path)
    assert main(["topology", "show", str(path)]) == 0
    astra = tmp_path / "net.yml"
    astra.write_text("topology: [Ring]\nnpus_count: [4]\nbandwidth: [50]\nlatency: [500]\n")
    capsys.readouterr()
    for name in (str(path), str(astra)):
        assert main(["cost", "allreduce", "--topology", name, "-b", "1M", "-e", "1M"]) == 0
        out = capsys.readouterr().out
        assert len([line for line in out.splitlines() if not line.startswith("#")]) == 1


def test_astra_files_are_capped_before_building(tmp_path, capsys):
    big = tmp_path / "big.yml"
    big.write_text("topology: [Ring, Ring]\nnpus_count: [4096, 4096]\nbandwidth: [50, 50]\n"
                   "latency: [500, 500]\n")  # fmt: skip
    assert main(["topology", "show", str(big)]) == 2
    assert "16777216 devices, more than the limit" in capsys.readouterr().err
    data = {"name": "x", "devices": [{"name": f"d{i}"} for i in range(9000)], "links": []}
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps(data))
    assert main(["topology", "show", str(huge)]) == 2
    assert "9000 devices" in capsys.readouterr().err


def test_gpu_tables_print_nccls_choice_and_the_model(capsys):
    assert (
        main(["cost", "allreduce", "--topology", "dgx-h100", "-b", "1K", "-e", "1G", "-f", "1024"])
        == 0
    )
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if not line.startswith("#")]
    assert [r[-1] for r in rows] == [
        "nccl:ring/LL",
        "nccl:ring/LL",
        "nccl:nvls/Simple",
    ]  # 1K, 1M, 1G
    assert "NCCL's tuning model" in out and "NCCL 2.30.7-1" in out


def test_step_reports_name_their_assumptions(capsys):
    assert main(["cost", "step", "--devices", "1,8", "--launch-overhead-us", "2"]) == 0
    out = capsys.readouterr().out
    assert "# assumption: kernel launch overhead 2 us per kernel, collectives included" in out
    assert "# assumption: framework overhead 5 us per op (assumption)" in out
