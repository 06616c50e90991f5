"""Tests for tf.distribute.cluster_resolver: ClusterSpec, resolvers, TF_CONFIG checks, MPI."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdist.distribute import virtual_devices
from simdist.distribute.cluster_resolver import (
    ClusterSpec,
    MPIClusterResolver,
    SimpleClusterResolver,
    TFConfigClusterResolver,
    chief_task,
    default_cluster_resolver,
    id_in_cluster,
    in_mpi_job,
    is_chief,
    mpi_world_from_env,
    use_tf_config,
    validate_tf_config,
    worker_count,
)

SEED_CONFIG = (
    '{"cluster": {"worker": ["localhost:12345", "localhost:23456"]}, '
    '"task": {"type": "worker", "index": 0} }'
)
MPI_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    for name in MPI_VARS:
        monkeypatch.delenv(name, raising=False)


def _config(cluster, task_type="worker", index=0, **extra):
    return {"cluster": cluster, "task": {"type": task_type, "index": index}, **extra}


# ---------------------------------------------------------------- ClusterSpec


def test_cluster_spec_dense_and_sparse():
    spec = ClusterSpec({"worker": ["w0:1", "w1:1", "w2:1"], "ps": {1: "p1:1", 3: "p3:1"}})
    assert spec.jobs == ["worker", "ps"]
    assert spec.num_tasks("worker") == 3 and spec.num_tasks("ps") == 2
    assert spec.task_indices("ps") == [1, 3]
    assert spec.task_address("worker", 2) == "w2:1"
    assert spec.job_tasks("ps") == [None, "p1:1", None, "p3:1"]
    assert spec.as_dict() == {"worker": ["w0:1", "w1:1", "w2:1"], "ps": {1: "p1:1", 3: "p3:1"}}
    assert repr(spec) == (
        "ClusterSpec({'ps': {1: 'p1:1', 3: 'p3:1'}, 'worker': ['w0:1', 'w1:1', 'w2:1']})"
    )


def test_cluster_spec_equality_bool_copy():
    spec = ClusterSpec({"worker": ["a:1", "b:1"]})
    assert spec == ClusterSpec({"worker": {0: "a:1", 1: "b:1"}})
    assert spec == {"worker": {0: "a:1", 1: "b:1"}}
    assert spec != ClusterSpec({"worker": ["a:1"]})
    assert bool(spec) and not ClusterSpec({})
    copy = ClusterSpec(ClusterSpec({"worker": ["a:1"], "chief": ["c:1"]}))
    assert copy.jobs == ["chief", "worker"]  # TF's copy goes through a sorted ClusterDef
    assert copy.as_cluster_def() == {"chief": {0: "c:1"}, "worker": {0: "a:1"}}


def test_cluster_spec_errors():
    with pytest.raises(TypeError, match="must be a list"):
        ClusterSpec({"worker": "a:1"})
    with pytest.raises(TypeError, match="must be a 'host:port' string"):
        ClusterSpec({"worker": [1234]})
    with pytest.raises(TypeError, match="dictionary mapping"):
        ClusterSpec(["a:1"])
    spec = ClusterSpec({"worker": ["a:1"]})
    with pytest.raises(ValueError, match="No such job in cluster: 'ps'"):
        spec.num_tasks("ps")
    with pytest.raises(ValueError, match="No task with index 5 in job 'worker'"):
        spec.task_address("worker", 5)


@given(st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True))
def test_as_dict_round_trips(indices):
    tasks = {i: f"h{i}:{1000 + i}" for i in indices}
    spec = ClusterSpec({"worker": tasks})
    again = ClusterSpec(spec.as_dict())
    assert again == spec
    dense = sorted(indices) == list(range(len(indices)))
    assert isinstance(spec.as_dict()["worker"], list) == dense


# ---------------------------------------------------------------- validation: valid configs


def test_the_api_page_config_is_valid():
    config = validate_tf_config(SEED_CONFIG)
    assert config.task_type == "worker" and config.task_id == 0
    assert config.cluster.as_dict() == {"worker": ["localhost:12345", "localhost:23456"]}


@pytest.mark.parametrize(
    "config",
    [
        None,
        "",
        "{}",
        _config({"chief": ["c:1"], "worker": ["w:1", "w:2"]}, "chief", 0, rpc_layer="grpc"),
        _config({"worker": ["[::1]:2222", "10.0.0.1:2222"]}, "worker", "1"),
        _config({"worker": {"0": "a:1", "2": "b:1"}}, "worker", 2),
        _config({"worker": ["w:1"], "evaluator": ["e:1"]}, "evaluator", 0, environment="cloud"),
        {"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0, "trial": "1"}},
    ],
)
def test_valid_configs(config):
    validate_tf_config(json.dumps(config) if isinstance(config, dict) else config)


def test_parameter_server_config():
    cluster = {"chief": ["c:1"], "worker": ["w:1", "w:2"], "ps": ["p:1"]}
    config = validate_tf_config(_config(cluster, "ps", 0), strategy="parameter_server")
    assert config.task_type == "ps"
    with pytest.raises(ValueError, match='no "ps" job, but ParameterServerStrategy'):
        validate_tf_config(_config({"worker": ["w:1"]}), strategy="parameter_server")


# ---------------------------------------------------------------- validation: each error


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            '{"cluster": {"worker": ["a:1",]}}',
            r"not valid JSON: Expecting value at line 1 column 31",
        ),
        ("{'cluster': {}}", r"not valid JSON: .* line 1 column 2"),
        ('{\n "cluster": {"worker": ["a:1"]}\n "task": {}}', r"line 3 column 2"),
        ("[1, 2]", r"must be a JSON object, got a JSON list"),
        ({"clutser": {"worker": ["a:1"]}}, r"unknown key 'clutser' \(did you mean \"cluster\"\?\)"),
        (
            _config({"worker": ["a:1"]}) | {"task": {"type": "worker", "idx": 0}},
            r'"task" has an unknown key \'idx\'',
        ),
        ({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker"}}, r'"task" has no "index"'),
        ({"cluster": {"worker": ["a:1"]}, "task": {"index": 0}}, r'"task" has no "type"'),
        ({"cluster": {"worker": ["a:1"]}}, r'has a "cluster" but no "task"'),
        ({"task": {"type": "worker", "index": 0}}, r'"task" is set but "cluster" is missing'),
        (
            _config({"worker": ["a:1"]}, "wroker"),
            r"task type 'wroker' \(did you mean \"worker\"\?\)",
        ),
        (_config({"master": ["a:1"]}), r"job named 'master'.* must be one of"),
        (_config({"worker": ["a:1"]}, "chief"), r'task type "chief" is not a job of the cluster'),
        (
            _config({"worker": ["a:1", "b:1"]}, "worker", 3),
            r'task index 3 is out of range for job "worker", which has 2 tasks; '
            r"use an index in \[0, 2\)",
        ),
        (_config({"worker": ["a:1"]}, "worker", -1), r'"index" must be a non-negative integer'),
        (_config({"worker": ["a:1"]}, "worker", True), r'"index" must be a non-negative integer'),
        (
            _config({"worker": {"0": "a:1", "2": "b:1"}}, "worker", 1),
            r"use one of its task indices \[0, 2\]",
        ),
        (
            _config({"worker": ["a:1", "b:1", "a:1"]}),
            r'address "a:1" to both worker\[0\] and worker\[2\]',
        ),
        (
            _config({"chief": ["a:1"], "worker": ["a:1"]}),
            r'address "a:1" to both chief\[0\] and worker\[0\]',
        ),
        (_config({"chief": ["a:1", "b:1"], "worker": ["c:1"]}), r"at most one chief"),
        (_config({"worker": ["a:1"], "evaluator": ["e:1", "e:2"]}), r"at most one evaluator"),
        (
            _config({"worker": ["a:1"], "ps": ["p:1"]}),
            r'"ps" job, but MultiWorkerMirroredStrategy.*use ParameterServerStrategy',
        ),
        (_config({"worker": ["localhost"]}), r"not of the form \"host:port\""),
        (_config({"worker": ["localhost:http"]}), r"port 'http' is not an integer"),
        (_config({"worker": ["localhost:70000"]}), r"port '70000' is not an integer in"),
        (_config({"worker": ["bad host:1"]}), r"host 'bad host' is not a hostname"),
        (_config({"worker": [":1"]}), r"not of the form"),
        (_config({"worker": [12]}), r'must be a "host:port" string'),
        (_config({"worker": "a:1"}), r'job "worker" must be a list'),
        (_config({"worker": []}), r'job "worker" has no tasks'),
        (_config({"worker": {"x": "a:1"}}), r"task key 'x'"),
        (_config(["a:1"]), r'"cluster" must be an object'),
        (_config({"ps": ["p:1"]}, "ps"), r'no "worker" or "chief" job'),
        ({"cluster": {"worker": ["a:1"]}, "task": [0]}, r'"task" must be an object'),
        (_config({"worker": ["a:1"]}, rpc_layer=1), r'"rpc_layer" must be a string'),
    ],
)
def test_validation_errors(config, message):
    text = config if isinstance(config, str) else json.dumps(config)
    with pytest.raises(ValueError, match=message):
        validate_tf_config(text)


def test_json_error_shows_the_line_with_a_caret():
    with pytest.raises(ValueError) as info:
        validate_tf_config('{"cluster": {"worker": ["a:1",]}}')
    lines = str(info.value).splitlines()
    assert lines[1].strip() == '{"cluster": {"worker": ["a:1",]}}'
    assert lines[2].index("^") == lines[1].index("]")


def test_unknown_strategy_name():
    with pytest.raises(ValueError, match="strategy must be one of"):
        validate_tf_config("{}", strategy="mirrored")


# ---------------------------------------------------------------- chief election


def test_chief_election_without_chief_job():
    cluster = {"worker": ["w0:1", "w1:1", "w2:1"]}
    assert chief_task(cluster) == ("worker", 0)
    assert [is_chief(cluster, "worker", i) for i in range(3)] == [True, False, False]
    assert worker_count(cluster, "worker") == 3
    assert [id_in_cluster(cluster, "worker", i) for i in range(3)] == [0, 1, 2]


def test_chief_election_with_chief_job():
    cluster = ClusterSpec({"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "evaluator": ["e:1"]})
    assert chief_task(cluster) == ("chief", 0)
    assert is_chief(cluster, "chief", 0)
    assert not is_chief(cluster, "worker", 0)
    assert is_chief(cluster, "evaluator", 0)  # TF: the evaluator is a chief of its own
    assert worker_count(cluster, "worker") == 3 and worker_count(cluster, "evaluator") == 1
    assert [id_in_cluster(cluster, "worker", i) for i in range(2)] == [1, 2]
    assert id_in_cluster(cluster, "chief", 0) == 0


def test_election_errors():
    assert chief_task({"ps": ["p:1"]}) is None
    with pytest.raises(ValueError, match='cluster task index 2 is out of range for job "worker"'):
        is_chief({"worker": ["w:1", "w:2"]}, "worker", 2)
    with pytest.raises(ValueError, match="at most one"):
        is_chief({"chief": ["c:1", "c:2"]}, "chief", 0)
    with pytest.raises(ValueError, match="no worker id"):
        id_in_cluster({"worker": ["w:1"], "ps": ["p:1"]}, "ps", 0)
    with pytest.raises(ValueError, match="must be a dict"):
        is_chief(["w:1"], "worker", 0)


# ---------------------------------------------------------------- resolvers


def test_tf_config_resolver_reads_environment_at_call_time(monkeypatch):
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == ClusterSpec({})
    assert resolver.task_type is None and resolver.task_id is None and resolver.master() == ""
    monkeypatch.setenv("TF_CONFIG", SEED_CONFIG)
    assert resolver.cluster_spec().as_dict() == {"worker": ["localhost:12345", "localhost:23456"]}
    assert (resolver.task_type, resolver.task_id) == ("worker", 0)
    assert resolver.master() == "localhost:12345"
    assert resolver.master("worker", 1, rpc_layer="grpc") == "grpc://localhost:23456"
    config = _config({"worker": ["a:1", "b:1"]}, "worker", 1, rpc_layer="grpc", environment="e")
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    assert resolver.task_id == 1 and resolver.rpc_layer == "grpc" and resolver.environment == "e"
    assert resolver.master() == "grpc://b:1"


def test_tf_config_resolver_overrides(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", SEED_CONFIG)
    resolver = TFConfigClusterResolver(
        task_type="worker", task_id=1, rpc_layer="grpc", environment="google"
    )
    assert (resolver.task_type, resolver.task_id, resolver.rpc_layer) == ("worker", 1, "grpc")
    assert resolver.environment == "google"
    resolver.task_id = 0
    resolver.rpc_layer = None
    assert resolver.task_id == 0 and resolver.rpc_layer is None
    assert resolver.validate().task_id == 0
    resolver.task_id = 7
    with pytest.raises(ValueError, match="task index 7 is out of range"):
        resolver.validate()


def test_tf_config_resolver_validates(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1", "a:1"]}}')
    with pytest.raises(ValueError, match='address "a:1" to both'):
        TFConfigClusterResolver().cluster_spec()
    monkeypatch.setenv("TF_CONFIG", json.dumps(_config({"worker": ["a:1"], "ps": ["p:1"]})))
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec().num_tasks("ps") == 1  # fine in general...
    with pytest.raises(ValueError, match="MultiWorkerMirroredStrategy"):
        resolver.validate("multi_worker")  # ...but not for MultiWorkerMirroredStrategy
    assert resolver.validate("parameter_server").task_type == "worker"


def test_session_master(monkeypatch):
    config = _config({"worker": ["a:1", "b:1"]}, session_master="grpc://m:1")
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    assert TFConfigClusterResolver().master() == "grpc://m:1"


def test_num_accelerators_counts_virtual_gpus(monkeypatch):
    monkeypatch.setattr(virtual_devices, "_counts", {"CPU": 1, "GPU": 3, "TPU": 0})
    assert TFConfigClusterResolver().num_accelerators() == {"GPU": 3}
    monkeypatch.setattr(virtual_devices, "_counts", {"CPU": 1, "GPU": 0, "TPU": 0})
    assert TFConfigClusterResolver().num_accelerators() == {}


def test_use_tf_config_is_per_thread(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", SEED_CONFIG)
    seen = {}

    def task(index):
        with use_tf_config(_config({"worker": ["a:1", "b:1", "c:1"]}, "worker", index)):
            seen[index] = TFConfigClusterResolver().task_id

    threads = [threading.Thread(target=task, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {0: 0, 1: 1, 2: 2}
    assert TFConfigClusterResolver().task_id == 0  # the environment again


def test_simple_cluster_resolver():
    spec = ClusterSpec({"worker": ["w0:2222", "w1:2222"]})
    resolver = SimpleClusterResolver(
        spec, task_type="worker", task_id=1, num_accelerators={"GPU": 8}, rpc_layer="grpc"
    )
    assert resolver.cluster_spec() is spec
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.num_accelerators() == {"GPU": 8}
    assert resolver.master() == "grpc://" and resolver.environment == ""
    assert resolver.master("worker", 0) == "grpc://w0:2222"
    assert SimpleClusterResolver(spec, master="m:1").master() == "m:1"
    assert SimpleClusterResolver(spec).num_accelerators() == {}
    with pytest.raises(TypeError, match="cluster_spec must be"):
        SimpleClusterResolver({"worker": ["a:1"]})
    with pytest.raises(TypeError, match="master must be a string"):
        SimpleClusterResolver(spec, master=None)


# ---------------------------------------------------------------- MPI


@pytest.mark.parametrize(
    ("rank_var", "size_var"),
    [("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")],
)
def test_mpi_resolver_from_launcher_env(monkeypatch, rank_var, size_var):
    assert not in_mpi_job()
    monkeypatch.setenv(rank_var, "2")
    monkeypatch.setenv(size_var, "4")
    assert in_mpi_job() and mpi_world_from_env() == (2, 4)
    resolver = default_cluster_resolver()
    assert isinstance(resolver, MPIClusterResolver)
    assert (resolver.task_type, resolver.task_id, resolver.world_size) == ("worker", 2, 4)
    spec = resolver.cluster_spec()
    assert spec.num_tasks("worker") == 4
    validate_tf_config(_config(spec.as_dict(), "worker", 2))  # a valid cluster
    assert is_chief(spec, "worker", 0) and not is_chief(spec, "worker", 2)
    assert resolver.master() == "localhost:20002"
    assert MPIClusterResolver(world_size=4, rank=2).task_id == 2  # agreeing is fine


def test_outside_mpi_default_is_tf_config():
    assert isinstance(default_cluster_resolver(), TFConfigClusterResolver)
    resolver = MPIClusterResolver(world_size=1, rank=0)
    assert resolver.master() == "" and resolver.cluster_spec().as_dict() == {
        "worker": ["localhost:20000"]
    }
    with pytest.raises(ValueError, match="Not running under mpiexec"):
        MPIClusterResolver()


@pytest.mark.parametrize("size_var", ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE"])
def test_mixed_mpi_trap_raises(monkeypatch, size_var):
    rank_var = "PMI_RANK" if size_var == "PMI_SIZE" else "OMPI_COMM_WORLD_RANK"
    monkeypatch.setenv(rank_var, "1")
    monkeypatch.setenv(size_var, "2")
    with pytest.raises(RuntimeError, match="started 2 ranks .* communicator has 1"):
        MPIClusterResolver(world_size=1, rank=0)
    with pytest.raises(RuntimeError, match="rank 1 but the MPI communicator says rank 0"):
        MPIClusterResolver(world_size=2, rank=0)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PMI_RANK": "0"}, "PMI_SIZE is missing"),
        ({"PMI_RANK": "x", "PMI_SIZE": "2"}, "PMI_RANK='x' is not an integer"),
        ({"PMI_RANK": "2", "PMI_SIZE": "2"}, r"rank must be in \[0, size\)"),
        (
            {
                "PMI_RANK": "0",
                "PMI_SIZE": "2",
                "OMPI_COMM_WORLD_RANK": "0",
                "OMPI_COMM_WORLD_SIZE": "4",
            },
            "leaked from another MPI",
        ),
    ],
)
def test_bad_mpi_env(env, message):
    with pytest.raises(ValueError, match=message):
        mpi_world_from_env(env)


def test_mpi_env_families_agreeing():
    env = {
        "PMI_RANK": "1",
        "PMI_SIZE": "2",
        "OMPI_COMM_WORLD_RANK": "1",
        "OMPI_COMM_WORLD_SIZE": "2",
    }
    assert mpi_world_from_env(env) == (1, 2)
    assert MPIClusterResolver(environ=env, base_port=3000).master(rpc_layer="grpc") == (
        "grpc://localhost:3001"
    )
    with pytest.raises(ValueError, match="base_port"):
        MPIClusterResolver(environ=env, base_port=65535)
