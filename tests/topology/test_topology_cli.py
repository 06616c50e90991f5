"""``simdist topology list`` and ``simdist topology show NAME``."""

import json

from simdist.cli import main
from simdist.topology import get_topology, save_topology


def test_list(capsys):
    assert main(["topology", "list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["name", "devices", "hosts", "description"]
    row = next(line for line in out.splitlines() if line.startswith("h100-cluster:2"))
    assert row.split()[1:3] == ["16", "2"]
    assert any(line.startswith("v4-32 ") and line.split()[1] == "16" for line in out.splitlines())


def test_show_preset(capsys):
    assert main(["topology", "show", "dgx-h100"]) == 0
    out = capsys.readouterr().out
    assert "devices: 8" in out
    assert "8 x GPU: bfloat16 989.5 TFLOP/s" in out
    assert "16 x nvlink: 450 GB/s per direction, 0.3 us latency" in out
    assert "hosts: 1 (8 devices per host)" in out
    assert "NVIDIA DGX H100 datasheet" in out


def test_show_torus(capsys):
    assert main(["topology", "show", "v5p-128"]) == 0
    out = capsys.readouterr().out
    assert "torus dims: 4x4x4 (torus" in out
    assert "100 GB/s per direction" in out


def test_show_file(tmp_path, capsys):
    path = tmp_path / "mine.json"
    save_topology(get_topology("dgx-a100"), path)
    json.loads(path.read_text())
    assert main(["topology", "show", str(path)]) == 0
    assert "topology dgx-a100" in capsys.readouterr().out


def test_show_unknown(capsys):
    assert main(["topology", "show", "dgx-z900"]) == 2
    err = capsys.readouterr().err
    assert "unknown topology 'dgx-z900'; valid names:" in err and "v4-N" in err
