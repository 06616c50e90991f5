"""Topology files: simdist JSON (round trip, validation naming the field) and ASTRA-sim YAML."""

import json
import sys

import pytest

from simdist.topology import (
    get_topology,
    load_topology,
    parse_astra_network,
    route,
    save_topology,
    topology_from_dict,
    topology_to_dict,
)


def _valid():
    return {
        "name": "box",
        "device_defaults": {
            "kind": "GPU",
            "peak_tflops": {"bfloat16": 312},
            "memory_bandwidth_gb_s": 2039,
            "memory_gib": 80,
        },
        "devices": [{"name": "gpu0"}, {"name": "gpu1"}, {"name": "gpu2", "host": 1}],
        "switches": [{"name": "sw", "kind": "nvswitch"}],
        "links": [
            {"src": "gpu0", "dst": "sw", "bandwidth_gb_s": 300, "latency_us": 0.3},
            {"src": "gpu1", "dst": "sw", "bandwidth_gb_s": 300, "latency_us": 0.3},
            {"src": "gpu2", "dst": "sw", "bandwidth_gb_s": 25, "latency_us": 2, "kind": "ib"},
        ],
        "sources": ["made up for a test"],
    }


def test_valid_description(tmp_path):
    path = tmp_path / "box.json"
    path.write_text(json.dumps(_valid()))
    topology = load_topology(path)
    assert topology.num_devices == 3 and topology.num_hosts == 2
    assert len(topology.links) == 6  # each entry is full duplex
    assert topology.devices[0].peak_flops == {"bfloat16": 312e12}
    assert topology.link_between("sw", "gpu2").bandwidth == 25e9
    assert topology.link_between("sw", "gpu2").latency == pytest.approx(2e-6)
    assert len(route(topology, "gpu0", "gpu2")) == 2


@pytest.mark.parametrize("name", ["dgx-h100", "h100-cluster:2:4", "v4-32", "pcie-8gpu"])
def test_round_trip(tmp_path, name):
    original = get_topology(name)
    path = tmp_path / "t.json"
    save_topology(original, path)
    loaded = load_topology(path)
    assert loaded.name == original.name and loaded.torus_dims == original.torus_dims
    assert loaded.sources == original.sources
    assert [(d.name, d.host, d.kind) for d in loaded.devices] == [
        (d.name, d.host, d.kind) for d in original.devices
    ]
    for a, b in zip(loaded.links, original.links, strict=True):
        assert (a.src, a.dst, a.kind) == (b.src, b.dst, b.kind)
        assert a.bandwidth == pytest.approx(b.bandwidth) and a.latency == pytest.approx(b.latency)
    for a, b in zip(loaded.devices, original.devices, strict=True):
        assert a.peak_flops == pytest.approx(b.peak_flops)
        assert a.memory_bytes == b.memory_bytes


def _mutate(change):
    data = _valid()
    change(data)
    return data


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d: d["links"][1].update(dst="gpu9"), r"links\[1\]\.dst: unknown node 'gpu9'"),
        (lambda d: d["links"][0].update(src="ghost"), r"links\[0\]\.src: unknown node 'ghost'"),
        (
            lambda d: d["links"][2].update(bandwidth_gb_s=0),
            r"links\[2\]\.bandwidth_gb_s: must be > 0",
        ),
        (
            lambda d: d["links"][2].update(bandwidth_gb_s=-5),
            r"links\[2\]\.bandwidth_gb_s: must be > 0",
        ),
        (lambda d: d["links"][0].update(latency_us=-1), r"links\[0\]\.latency_us: must be >= 0"),
        (lambda d: d["links"][0].pop("latency_us"), r"links\[0\]: missing field 'latency_us'"),
        (
            lambda d: d["links"][0].update(bandwith_gb_s=1),
            r"links\[0\]\.bandwith_gb_s: unknown field",
        ),
        (
            lambda d: d["devices"][1].update(name="gpu0"),
            r"devices\[1\]\.name: duplicate name 'gpu0'",
        ),
        (
            lambda d: d["switches"][0].update(name="gpu1"),
            r"switches\[0\]\.name: duplicate name 'gpu1'",
        ),
        (lambda d: d["devices"][0].update(kind="FPGA"), r"devices\[0\]\.kind: must be one of"),
        (lambda d: d.pop("device_defaults"), r"devices\[0\]: missing field 'kind'"),
        (lambda d: d.pop("links"), r"topology: missing field 'links'"),
        (lambda d: d.update(devices=[]), r"devices: must be a non-empty list"),
        (
            lambda d: d.update(torus_dims=[2, 2]),
            r"torus_dims: \[2, 2\] holds 4 devices but there are 3",
        ),
        (lambda d: d["links"].pop(2), r"devices\[2\]: 'gpu2' cannot be reached"),
        (lambda d: d["devices"][2].update(host=-1), r"devices\[2\]\.host: must be an integer >= 0"),
        (
            lambda d: d["device_defaults"]["peak_tflops"].update(bfloat16=0),
            r"devices\[0\]\.peak_tflops\.bfloat16: must be > 0",
        ),
    ],
)
def test_malformed_descriptions_name_the_field(change, match):
    with pytest.raises(ValueError, match=match):
        topology_from_dict(_mutate(change))


def test_bad_json_and_suffix(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_topology(bad)
    with pytest.raises(ValueError, match="unknown topology file type '.toml'"):
        load_topology(tmp_path / "x.toml")


def test_to_dict_is_json_serialisable():
    json.dumps(topology_to_dict(get_topology("v5litepod-16")))


ASTRA_3D = """# Analytical Network Input File
# 3D topology with 64 NPUs (2 x 8 x 4)
topology: [ Ring, FullyConnected, Switch ]  # Ring, Switch, FullyConnected

# 2 x 8 x 4 = 64 NPUs
npus_count: [ 2, 8, 4 ]  # number of NPUs
bandwidth: [ 200.0, 100.0, 50.0 ]  # GB/s
latency: [ 50.0, 500.0, 2000.0 ]  # ns
"""


@pytest.fixture(params=["pyyaml", "builtin"])
def yaml_mode(request, monkeypatch):
    if request.param == "builtin":
        monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml -> ImportError
    else:
        pytest.importorskip("yaml")
    return request.param


def test_astra_hierarchy(tmp_path, yaml_mode):
    path = tmp_path / "network.yml"
    path.write_text(ASTRA_3D)
    topology = load_topology(path)
    assert topology.num_devices == 64 and topology.torus_dims == ()
    assert len(topology.switches) == 2 * 8  # one switch per dimension-2 group
    gb = 2**30
    assert topology.link_between("npu0", "npu1").bandwidth == 200 * gb  # dim 0 ring of 2
    assert topology.link_between("npu0", "npu1").latency == pytest.approx(50e-9)
    assert topology.link_between("npu0", "npu14").bandwidth == 100 * gb  # dim 1 clique
    assert topology.link_between("npu0", "npu2").kind == "dim1"
    path_links = route(topology, "npu0", "npu16")  # dim 2 goes through a switch
    assert [link.kind for link in path_links] == ["dim2", "dim2"]
    assert topology.num_hosts == 32  # dimension 0 is taken as intra-node


def test_astra_ring_ring_is_a_2d_torus(yaml_mode):
    text = (
        "topology: [ Ring, Ring ]\nnpus_count: [4, 8 ]\n"
        "bandwidth: [80.0, 80.0]\nlatency: [ 1000.0, 1000.0 ]\n"
    )
    topology = parse_astra_network(text)
    assert topology.torus_dims == (8, 4) and topology.torus_wraparound == (True, True)
    assert len(topology.links) == 32 * 4


def test_astra_scalar_topology(yaml_mode):
    text = (
        "topology: FullyConnected  # comment\nnpus_count: [5]\nbandwidth: [25.0]\nlatency: [1.0]\n"
    )
    topology = parse_astra_network(text)
    assert len(topology.links) == 20


@pytest.mark.parametrize(
    "text, match",
    [
        ("topology: [Ring]\nnpus_count: [4]\nbandwidth: [10]\n", "latency: missing"),
        (
            "topology: [Torus]\nnpus_count: [4]\nbandwidth: [10]\nlatency: [1]\n",
            r"topology\[0\]: 'Torus' is not supported",
        ),
        (
            "topology: [Ring]\nnpus_count: [4]\nbandwidth: [0]\nlatency: [1]\n",
            r"bandwidth\[0\]: must be > 0",
        ),
        (
            "topology: [Ring, Ring]\nnpus_count: [4]\nbandwidth: [1, 1]\nlatency: [1, 1]\n",
            "npus_count has 1 entries but topology has 2 dimensions",
        ),
        (
            "topology: [Ring]\nnpus_count: [0]\nbandwidth: [1]\nlatency: [1]\n",
            r"npus_count\[0\]: must be a positive integer",
        ),
    ],
)
def test_astra_errors(text, match, yaml_mode):
    with pytest.raises(ValueError, match=match):
        parse_astra_network(text)


def test_astra_block_yaml_without_pyyaml(monkeypatch):
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(ImportError, match=r"pip install 'simdist\[yaml\]'"):
        parse_astra_network("topology:\n  - Ring\nnpus_count: [4]\n")
