"""Fuzz what simdist reads from outside: TF_CONFIG documents and topology files.

Valid documents load to what they describe; broken ones (bad JSON, bad bytes, wrong types,
missing parts, out-of-range indexes, huge sizes) are refused with a documented error
(docs/errors.md) — never a lookup or decode error from inside, never a hang.
"""

import json
import os
import tempfile

from hypothesis import example, given
from hypothesis import strategies as st

import simdist as tf
from simdist.distribute.cluster_resolver.tf_config import validate_tf_config
from simdist.topology.describe import resolve
from simdist.topology.model import MAX_DEVICES
from tests.fuzz.contract import budget, outcome

ADDRESSES = st.builds(
    "{}:{}".format,
    st.sampled_from(["host0", "10.0.0.1", "localhost", "w-1"]),
    st.integers(1, 65535),
)
JOBS = st.sampled_from(["worker", "chief", "evaluator", "ps"])
JSON_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=6)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def tf_configs(draw):
    """A TF_CONFIG: a valid MultiWorker cluster, then maybe one thing broken."""
    workers = draw(st.lists(ADDRESSES, min_size=1, max_size=4, unique=True))
    cluster = {"worker": workers}
    if draw(st.booleans()):
        cluster["chief"] = [draw(ADDRESSES.filter(lambda a: a not in workers))]
    task = {"type": "worker", "index": draw(st.integers(0, len(workers) - 1))}
    config = {"cluster": cluster, "task": task}
    breakage = draw(
        st.sampled_from(
            ["none", "index", "type", "drop_task", "drop_cluster", "job_value", "task_value", "any"]
        )
    )
    if breakage == "index":
        task["index"] = draw(
            st.one_of(st.integers(-3, 10), st.sampled_from(["0", 1.5, None, True]))
        )
    elif breakage == "type":
        task["type"] = draw(st.one_of(JOBS, st.text(max_size=6), st.integers()))
    elif breakage == "drop_task":
        del config["task"]
    elif breakage == "drop_cluster":
        del config["cluster"]
    elif breakage == "job_value":
        cluster[draw(JOBS)] = draw(JSON_VALUES)
    elif breakage == "task_value":
        config["task"] = draw(JSON_VALUES)
    elif breakage == "any":
        config[draw(st.sampled_from(["cluster", "task", "rpc_layer", "environment"]))] = draw(
            JSON_VALUES
        )
    return config


def _text_forms(config):
    text = json.dumps(config)
    return st.one_of(
        st.just(text),
        st.just(text.encode()),
        st.integers(0, len(text)).map(lambda n: text[:n]),  # truncated
        st.integers(0, max(len(text) - 1, 0)).map(lambda n: text[:n] + "\n" + text[n:]),
        st.binary(max_size=20).map(lambda b: text.encode()[:5] + b),  # garbage bytes
    )


@budget(60)
@given(data=st.data())
@example(data=None)
def test_tf_config_documents(data):
    if data is None:  # regression: an error on the last, empty line was an IndexError
        documents = ['{"cluster":\n', b"\xff\xfe{}", "[" * 100_000, '{"cluster": {"worker": 3}}']
    else:
        config = data.draw(tf_configs())
        documents = [config, data.draw(_text_forms(config))]
    for doc in documents:
        kind, parsed = outcome(validate_tf_config, doc, "multi_worker", True, False)
        if kind == "ok" and isinstance(doc, dict):
            spec = parsed.cluster.as_dict()
            assert spec["worker"] == doc["cluster"]["worker"]
            assert parsed.task_type in doc["cluster"]
            assert 0 <= parsed.task_id < len(doc["cluster"][parsed.task_type])
        # the resolver reads the same documents the same way
        if isinstance(doc, dict):
            resolver_kind, _ = outcome(_resolver_task, doc)
            if kind == "ok":
                assert resolver_kind == "ok"


def _resolver_task(doc):
    from simdist.distribute.cluster_resolver.tf_config import use_tf_config

    with use_tf_config(doc):
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        return resolver.task_type, resolver.task_id, resolver.cluster_spec().as_dict()


def _valid_topology(draw, n):
    devices = [{"name": f"gpu{i}", "host": 0} for i in range(n)]
    links = [
        {"src": f"gpu{i}", "dst": "sw", "bandwidth_gb_s": 100, "latency_us": 1.0, "kind": "nvlink"}
        for i in range(n)
    ]
    return {
        "name": "fuzz-box",
        "device_defaults": {
            "kind": "GPU",
            "peak_tflops": {"bfloat16": 100},
            "memory_bandwidth_gb_s": 1000,
            "memory_gib": 16,
        },
        "devices": devices,
        "switches": [{"name": "sw", "kind": "nvswitch"}],
        "links": links,
        "sources": ["fuzz"],
    }


BAD_NUMBERS = st.sampled_from([-1, 0, float("nan"), float("inf"), 1e308, "100", None, [], True])


@st.composite
def topology_documents(draw):
    """(text, suffix, devices or None when broken)."""
    n = draw(st.integers(1, 4))
    doc = _valid_topology(draw, n)
    breakage = draw(
        st.sampled_from(["none", "number", "node", "drop", "type", "extra", "any", "astra"])
    )
    if breakage == "number":
        link = doc["links"][draw(st.integers(0, n - 1))]
        link[draw(st.sampled_from(["bandwidth_gb_s", "latency_us"]))] = draw(BAD_NUMBERS)
    elif breakage == "node":
        doc["links"][0]["dst"] = draw(st.sampled_from(["gpu9", "", None, 3]))
    elif breakage == "drop":
        del doc[draw(st.sampled_from(["devices", "links", "name"]))]
    elif breakage == "type":
        doc[draw(st.sampled_from(["devices", "links", "switches"]))] = draw(JSON_VALUES)
    elif breakage == "extra":
        doc[draw(st.text(min_size=1, max_size=5))] = 1
    elif breakage == "any":
        doc = draw(JSON_VALUES)
    elif breakage == "astra":
        counts = draw(
            st.lists(st.one_of(st.integers(-2, 8), st.just(10**6)), min_size=1, max_size=3)
        )
        text = (
            f"topology: [{', '.join(['Ring'] * len(counts))}]\n"
            f"npus_count: {counts}\n"
            f"bandwidth: {[draw(st.sampled_from([50, 0, -1]))] * len(counts)}\n"
            f"latency: {[draw(st.sampled_from([500, 0, -5]))] * len(counts)}\n"
        )
        valid = all(c >= 2 for c in counts) and "-" not in text and "bandwidth: [0" not in text
        import math

        devices = math.prod(counts) if valid else None
        return text, ".yml", devices if devices is None or devices <= MAX_DEVICES else -1
    text = json.dumps(doc)
    intact = breakage == "none"  # an unknown field is refused too
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(text) - 1))
        text, intact = text[:cut], False
    return text, ".json", (n if intact else None)


@budget(50)
@given(document=topology_documents())
@example(document=("\xff garbage", ".json", None))
@example(
    document=(
        "topology: [Ring]\nnpus_count: [100000]\nbandwidth: [50]\nlatency: [500]\n",
        ".yml",
        -1,
    )
)
def test_topology_files(document):
    text, suffix, devices = document
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "net" + suffix)
        with open(path, "wb") as f:
            f.write(
                text.encode("utf-8", "surrogateescape")
                if text.isascii()
                else text.encode("latin-1", "replace")
            )
        kind, topology = outcome(resolve, path)
        directory = os.path.join(folder, "dir" + suffix)
        os.mkdir(directory)
        assert outcome(resolve, directory)[0] == "raised"
    if devices == -1:
        assert kind == "raised" and "limit" in str(topology)
    elif devices is None:
        pass  # broken in some way: refused (checked by outcome) or, for a harmless break, read
    else:
        assert kind == "ok", topology
        assert topology.num_devices == devices
