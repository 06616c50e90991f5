"""tf.tpu.experimental.DeviceAssignment: placement as TF's, and TPUStrategy honouring it."""

import json
import os
import subprocess
import sys

import pytest

import simdist as tf
from simdist.distribute import tpu_system

DeviceAssignment = tf.tpu.experimental.DeviceAssignment
DeviceOrderMode = tf.tpu.experimental.DeviceOrderMode


pytestmark = pytest.mark.usefixtures("fresh_tpu_system")  # tests/distribute/conftest.py


def initialize(tpu="v3-8"):
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
    tf.config.experimental_connect_to_cluster(resolver)
    return resolver, tf.tpu.experimental.initialize_tpu_system(resolver)


# (slice, computation_shape, computation_stride, num_replicas, device_order_mode)
CASES = [
    ("v3-8", None, None, 1, 0),
    ("v3-8", None, None, 8, 0),
    ("v3-8", None, None, 4, 0),
    ("v3-8", [1, 1, 1, 2], None, 1, 0),
    ("v3-8", [1, 1, 1, 2], None, 4, 0),
    ("v3-8", [1, 1, 1, 2], None, 4, 2),
    ("v3-8", [2, 1, 1, 1], None, 2, 0),
    ("v3-8", [1, 1, 1, 1], [2, 1, 1, 1], 4, 0),
    ("v3-32", None, None, 32, 0),
    ("v3-32", [1, 1, 1, 2], None, 16, 0),
    ("v3-32", [2, 2, 1, 2], None, 4, 0),
    ("v3-32", [2, 2, 1, 2], None, 4, 1),
    ("v3-32", [1, 2, 1, 1], [2, 1, 1, 1], 8, 0),
    ("v4-32", None, None, 16, 0),
    ("v4-32", [1, 1, 2, 1], None, 8, 0),
    ("v4-128", [2, 2, 2, 1], None, 8, 0),
    ("v4-128", None, None, 5, 0),
]


def _simdist_assignments() -> tuple[dict, list]:
    topologies, out = {}, []
    for tpu, shape, stride, n, mode in CASES:
        if tpu not in topologies:
            topologies[tpu] = initialize(tpu)[1]
        da = DeviceAssignment.build(topologies[tpu], shape, stride, n, DeviceOrderMode(mode))
        out.append(da.core_assignment.tolist())
    described = {
        tpu: {"mesh_shape": t.mesh_shape.tolist(), "coords": t.device_coordinates.tolist()}
        for tpu, t in topologies.items()
    }
    return described, out


_TF_PROGRAM = r"""
import json, sys
import numpy as np
from tensorflow.python.tpu import device_assignment as lib
from tensorflow.python.tpu.topology import Topology
payload = json.load(sys.stdin)
out = []
for tpu, shape, stride, n, mode in payload["cases"]:
    t = payload["topologies"][tpu]
    topology = Topology(mesh_shape=t["mesh_shape"], device_coordinates=t["coords"])
    da = lib.DeviceAssignment.build(topology, shape, stride, n, lib.DeviceOrderMode(mode))
    row = {"core_assignment": da.core_assignment.tolist(),
           "tpu_device": [da.tpu_device(r, c) for r in range(da.num_replicas)
                          for c in range(da.num_cores_per_replica)],
           "host_device": [da.host_device(r, job="worker") for r in range(da.num_replicas)],
           "tpu_ordinal": [int(da.tpu_ordinal(r)) for r in range(da.num_replicas)],
           "lookup": [da.lookup_replicas(0, 0)]}
    out.append(row)
print(json.dumps(out))
"""


@pytest.mark.tensorflow
def test_build_places_replicas_as_tensorflow_does():
    topologies, _ = _simdist_assignments()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-c", _TF_PROGRAM],
        input=json.dumps({"cases": CASES, "topologies": topologies}),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    for (tpu, shape, stride, n, mode), want in zip(CASES, theirs, strict=True):
        topology = initialize(tpu)[1]
        da = DeviceAssignment.build(topology, shape, stride, n, DeviceOrderMode(mode))
        case = (tpu, shape, stride, n, mode)
        assert da.core_assignment.tolist() == want["core_assignment"], case
        cores = da.num_cores_per_replica
        got = [da.tpu_device(r, c) for r in range(n) for c in range(cores)]
        assert got == want["tpu_device"], case
        assert [da.host_device(r, job="worker") for r in range(n)] == want["host_device"], case
        assert [da.tpu_ordinal(r) for r in range(n)] == want["tpu_ordinal"], case
        assert [da.lookup_replicas(0, 0)] == want["lookup"], case


def test_build_validates_its_arguments():
    _, topology = initialize("v3-8")
    with pytest.raises(ValueError, match="must have shape \\[4\\]"):
        DeviceAssignment.build(topology, computation_shape=[1, 1, 2])
    with pytest.raises(ValueError, match="must be positive"):
        DeviceAssignment.build(topology, computation_shape=[1, 0, 1, 1])
    with pytest.raises(ValueError, match="does not fit in TPU topology shape"):
        DeviceAssignment.build(topology, computation_shape=[4, 1, 1, 1])
    with pytest.raises(ValueError, match="requested 9 replicas but only 8"):
        DeviceAssignment.build(topology, num_replicas=9)
    with pytest.raises(ValueError, match="RING is not compatible"):
        DeviceAssignment.build(topology, num_replicas=2, device_order_mode=DeviceOrderMode.RING)
    with pytest.raises(ValueError, match="must be a Topology"):
        DeviceAssignment("v3-8", [[[0, 0, 0, 0]]])
    with pytest.raises(ValueError, match="rank 3"):
        DeviceAssignment(topology, [[0, 0, 0, 0]])
    da = DeviceAssignment(topology, [[[1, 1, 0, 1]], [[0, 0, 0, 0]]])
    assert (da.num_replicas, da.num_cores_per_replica) == (2, 1)
    assert da.coordinates(0, 0) == (1, 1, 0, 1)
    assert da.tpu_device(0) == "/task:0/device:TPU:7"
    assert da.host_device(1, job="worker") == "/job:worker/task:0/device:CPU:0"
    assert da.lookup_replicas(0, 0) == [0, 1]
    with pytest.raises(ValueError, match="Can not find any replica"):
        da.lookup_replicas(1, 0)


def test_strategy_runs_the_assigned_replicas_on_their_devices():
    resolver, topology = initialize("v3-8")
    da = DeviceAssignment(topology, [[[1, 1, 0, 1]], [[0, 0, 0, 1]], [[0, 1, 0, 0]]])
    strategy = tf.distribute.TPUStrategy(resolver, experimental_device_assignment=da)
    assert strategy.num_replicas_in_sync == 3
    assert strategy.extended.experimental_device_assignment is da
    system = tpu_system.initialized_system(resolver).devices
    assert strategy.extended.worker_devices == tuple(system[i] for i in (7, 1, 2))
    with strategy.scope():
        v = tf.Variable(1.0)
    assert [c.device for c in v.values] == list(strategy.extended.worker_devices)

    @tf.function
    def step():
        ctx = tf.distribute.get_replica_context()
        return ctx.all_reduce("sum", tf.cast(ctx.replica_id_in_sync_group, tf.float32) + 1.0)

    result = strategy.run(step)
    assert [float(t) for t in strategy.experimental_local_results(result)] == [6.0] * 3
    assert strategy.extended.num_hosts == 1
    assert strategy.extended.num_replicas_per_host == 3


def test_the_docstring_model_parallel_example_runs_on_logical_core_0():
    resolver, topology = initialize("v3-8")
    da = DeviceAssignment.build(topology, computation_shape=[1, 1, 1, 2], num_replicas=1)
    strategy = tf.distribute.TPUStrategy(resolver, experimental_device_assignment=da)
    assert strategy.num_replicas_in_sync == 1
    t = tf.constant([1.0, 2.0])
    assert strategy.experimental_assign_to_logical_device(t, 1) is t
    with pytest.raises(ValueError, match="only total of 2 logical devices"):
        strategy.experimental_assign_to_logical_device(t, 2)


def test_a_multi_host_assignment_and_its_input():
    resolver, topology = initialize("v3-32")  # 4 hosts x 8 cores
    da = DeviceAssignment.build(topology, computation_shape=[1, 1, 1, 2], num_replicas=16)
    strategy = tf.distribute.TPUStrategy(resolver, experimental_device_assignment=da)
    assert strategy.num_replicas_in_sync == 16
    assert strategy.extended.num_hosts == 4
    assert strategy.extended.num_replicas_per_host == 4
    hosts = [int(d.split("/task:")[1][0]) for d in strategy.extended.worker_devices]
    assert hosts != sorted(hosts)  # TF's placement interleaves the hosts
    # each host reads its own part of the global batch and feeds its replicas in replica order
    dataset = tf.data.Dataset.range(64).batch(32)
    batch = next(iter(strategy.experimental_distribute_dataset(dataset)))
    parts = [p.numpy().tolist() for p in strategy.experimental_local_results(batch)]
    assert all(len(p) == 2 for p in parts)
    assert sorted(x for p in parts for x in p) == list(range(32))
    host_0 = [p for p, h in zip(parts, hosts, strict=True) if h == 0]
    assert host_0 == sorted(host_0)  # its pipeline, in the order of its replicas


def test_an_assignment_of_another_topology_is_refused():
    _, small = initialize("v3-8")
    da = DeviceAssignment.build(small, num_replicas=2)
    resolver, _ = initialize("v4-8")
    with pytest.raises(ValueError, match="another TPU topology"):
        tf.distribute.TPUStrategy(resolver, experimental_device_assignment=da)
